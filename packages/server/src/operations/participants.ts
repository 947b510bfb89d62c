import { operations as contract, ZParticipantPathParams, ZPollToken } from '@convene/contract';
import {
  approveParticipant,
  getJoinStatus,
  joinSpace,
  kickParticipant,
  leaveSpace,
  muteParticipant,
  unmuteParticipant,
} from '@convene/core';
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { hints } from '../mcp/tool';
import { type Declaration, operation } from './declare';

/** The owner's moderation actions share their shape: a participant of the space in, `{ ok }` out. */
function moderation(
  action: typeof contract.approveParticipant,
  useCase: typeof approveParticipant,
  title: string,
  description: string,
  annotations: ToolAnnotations,
): Declaration {
  return operation(action, {
    run: ({ spaceId, participantId }, { deps, key }) => useCase({ deps, spaceId, participantId, key }),
    tool: { title, description, annotations },
  });
}

export const participantOperations: Declaration[] = [
  operation(contract.joinSpace, {
    run: ({ spaceId, ...input }, { deps, key, userToken }) =>
      joinSpace({ deps, spaceId, key, input, userToken }),
    respond: ({ result, pending }) => ({
      body: result,
      pending,
      headers: pending && result.statusUrl ? { Location: result.statusUrl } : undefined,
    }),
    pending: {
      description: "Private space: the join waits for the owner's approval; poll statusUrl",
      headers: {
        Location: {
          description: 'Absolute URL of the join-status poll (equals statusUrl)',
          required: true,
          schema: { type: 'string', format: 'uri' },
        },
      },
    },
    tool: {
      title: 'Join a space',
      description:
        'Join a space with its invitation key (as privateKey). In a public space you are active at once and get your participantPrivateKey: use it from then on. In a private space you get status "pending" and a pollToken: call get_join_status with the same invitation key and that pollToken until the owner approves.',
      annotations: hints.create,
      userTokenArg: 'Optional usr_ user token linking this participant to a human dashboard (identity only).',
    },
  }),
  operation(contract.getJoinStatus, {
    run: ({ spaceId, participantId }, { deps, key, pollToken }) =>
      getJoinStatus({ deps, spaceId, participantId, key, pollToken }),
    respond: ({ result, pending }) => ({ body: result, pending }),
    pending: { description: "Still waiting for the owner's approval" },
    tool: {
      title: 'Poll a pending join',
      description:
        'Poll a join waiting for the owner’s approval, with the same invitation key used to join and the pollToken join_space returned. Returns status "pending" while waiting, then participantPrivateKey once approved: store the key at once (the same poll answers it again for 10 minutes after the first time, in case that answer was lost, then 404, code join_key_collected). A join the owner refused (kicked) answers 404, code join_refused.',
      annotations: hints.collect,
      input: ZParticipantPathParams.extend({
        pollToken: ZPollToken.optional(),
      }),
    },
  }),
  moderation(
    contract.approveParticipant,
    approveParticipant,
    'Approve a participant',
    'Admit a participant waiting for approval in a private space; it then gets its key from get_join_status. To refuse it instead, kick_participant. Owner key.',
    hints.transition,
  ),
  operation(contract.kickParticipant, {
    run: ({ spaceId, participantId, ifStatus }, { deps, key }) =>
      kickParticipant({ deps, spaceId, participantId, key, ifStatus }),
    tool: {
      title: 'Kick a participant',
      description:
        'Remove a participant: its key stops working at once and its locks are released. Kicking a participant waiting for approval refuses its join: its get_join_status answers 404 (join request refused). To refuse a joiner and never remove someone approved meanwhile, pass ifStatus "waitingForApproval": anyone else is answered 409 and stays. Owner key.',
      annotations: hints.destroy,
    },
  }),
  moderation(
    contract.muteParticipant,
    muteParticipant,
    'Mute a participant',
    'Mute an active participant: it can still read but cannot send messages, create artifacts or take locks. Owner key.',
    hints.transition,
  ),
  moderation(
    contract.unmuteParticipant,
    unmuteParticipant,
    'Unmute a participant',
    'Let a muted participant send messages again. Owner key.',
    hints.transition,
  ),
  operation(contract.leaveSpace, {
    run: ({ spaceId }, { deps, key }) => leaveSpace({ deps, spaceId, key }),
    tool: {
      title: 'Leave a space',
      description:
        'Leave the space: your participant key stops working and your locks are released. Participant key.',
      annotations: hints.destroy,
    },
  }),
];
