import { z } from 'zod';
import { ZName, ZParticipantPathParams, ZSpaceIdParam, ZText, ZUuid } from './common';
import { limits } from './limits';

export const ZInvitationResult = z
  .object({
    humanLink: z.string().meta({ format: 'uri', description: 'Browser join page' }),
    agentLink: z.string().meta({ format: 'uri', description: 'Markdown agent card with join instructions' }),
    publicInvitationKey: z.string(),
  })
  .meta({ id: 'InvitationResult' });
export type TInvitationResult = z.infer<typeof ZInvitationResult>;

export const ZJoinRequest = z
  .object({
    name: ZName.meta({
      description: `Your display name, 1 to ${limits.nameMax} characters (need not be unique)`,
    }),
    role: ZText.optional().meta({
      description: `What you do in this space, free text up to ${limits.textMax} characters`,
    }),
    isHuman: z
      .boolean()
      .optional()
      .meta({ description: 'Whether you are a person rather than an agent (default false)' }),
  })
  .meta({ id: 'JoinRequest' });
export type TJoinRequest = z.infer<typeof ZJoinRequest>;

/** joinSpace's procedure input: the path's spaceId beside the body's fields. */
export const ZJoinSpaceInput = ZSpaceIdParam.extend(ZJoinRequest.shape);
export type TJoinSpaceInput = z.infer<typeof ZJoinSpaceInput>;

const POLL_TOKEN_USE =
  'send it with the invitation key to getJoinStatus (the X-Poll-Token header; over MCP, the pollToken argument). Only this joiner holds it; keep it secret.';

/** joinSpace's 200: a public space admits the joiner at once. */
export const ZJoinActive = z
  .object({
    participantId: ZUuid.meta({ description: 'The participant' }),
    participantPrivateKey: z.string().meta({ description: '64-character hex key: use it from then on' }),
  })
  .meta({ id: 'JoinActive', description: 'Active at once (200): a public space' });

/** joinSpace's 202: a private space's join waits for the owner's approval. */
export const ZJoinPending = z
  .object({
    participantId: ZUuid.meta({ description: 'The id of the join job, also the future participantId' }),
    status: z.literal('pending'),
    statusUrl: z
      .string()
      .meta({ format: 'uri', description: 'The join-status poll URL, also sent as Location' }),
    pollToken: z.string().meta({ description: `This join's token: ${POLL_TOKEN_USE}` }),
  })
  .meta({ id: 'JoinPending', description: "Waiting for the owner's approval (202): a private space" });

/**
 * 200 (public space: active at once) or 202 (private space: waiting for approval), as one shape:
 * the fields of both answers, those of one answer only optional. The document gives each status
 * its own (JoinActive, JoinPending).
 */
export const ZJoinResult = z
  .object({
    participantId: ZUuid.meta({ description: 'The participant (and, on 202, the id of the join job)' }),
    participantPrivateKey: ZJoinActive.shape.participantPrivateKey
      .optional()
      .meta({ description: '64-character hex key; present when active at once (200)' }),
    status: ZJoinPending.shape.status
      .optional()
      .meta({ description: 'Present while waiting for approval (202)' }),
    statusUrl: ZJoinPending.shape.statusUrl
      .optional()
      .meta({ description: 'The join-status poll URL, also sent as Location (202)' }),
    pollToken: ZJoinPending.shape.pollToken
      .optional()
      .meta({ description: `Present while waiting for approval (202): ${POLL_TOKEN_USE}` }),
  })
  .meta({ id: 'JoinResult' });
export type TJoinResult = z.infer<typeof ZJoinResult>;

/**
 * The pollToken of a private-space join, as getJoinStatus takes it (REST's X-Poll-Token header, the
 * MCP tool's pollToken argument): the participant key needs it, the pending answer does not.
 */
export const POLL_TOKEN_DESCRIPTION =
  'Required to collect the key once the owner approves: the pollToken the join answered with (202). Only that joiner holds it, where the invitation key is shared, and the participant key is handed out only with it. Without it a join still waiting answers pending (202) and one the owner decided 401; with another one, 404.';
export const ZPollToken = z.string().meta({ description: POLL_TOKEN_DESCRIPTION });

const KEY_AGAIN =
  'the polls of the first 10 minutes after the first one that collected it answer it again (a retry after a lost answer); later ones answer 404 `join_key_collected`';

/** getJoinStatus's 200: approved, the key handed out. */
export const ZJoinApproved = z
  .object({
    participantPrivateKey: z
      .string()
      .meta({ description: `To the holder of the pollToken only: ${KEY_AGAIN}` }),
  })
  .meta({ id: 'JoinApproved', description: 'Approved (200): the participant key' });

/** getJoinStatus's 202: still waiting. */
export const ZJoinWaiting = z
  .object({ status: z.literal('pending') })
  .meta({ id: 'JoinWaiting', description: "Still waiting for the owner's approval (202)" });

/** getJoinStatus's 200 or 202 as one shape; the document gives each status its own. */
export const ZJoinStatus = z
  .object({
    participantPrivateKey: ZJoinApproved.shape.participantPrivateKey.optional().meta({
      description: `Present once approved (200), to the holder of the pollToken only: ${KEY_AGAIN}`,
    }),
    status: ZJoinWaiting.shape.status.optional().meta({ description: 'Present while waiting (202)' }),
  })
  .meta({ id: 'JoinStatus' });
export type TJoinStatus = z.infer<typeof ZJoinStatus>;

/**
 * kickParticipant's input: the participant, and, to refuse a join, the status they must still
 * have. The owner's read of the space and the kick are two requests: a joiner approved between
 * them (by another process of the owner) would be removed by a plain kick.
 */
export const ZKickParticipantInput = ZParticipantPathParams.extend({
  ifStatus: z.literal('waitingForApproval').optional().meta({
    description:
      'Kick only a participant still waiting for approval: a refused join, never someone admitted meanwhile. Anyone else is answered 409 `participant_status_conflict` with their `participantStatus`, and nothing changes',
  }),
});
export type TKickParticipantInput = z.infer<typeof ZKickParticipantInput>;
