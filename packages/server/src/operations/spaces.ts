import { operations as contract } from '@convene/contract';
import {
  closeSpace,
  createInvitation,
  createSpace,
  getMySpaceKey,
  getSpace,
  updateSpace,
} from '@convene/core';
import { hints } from '../mcp/tool';
import { type Declaration, operation } from './declare';

export const spaceOperations: Declaration[] = [
  operation(contract.createSpace, {
    run: (input, { deps, userToken }) => createSpace({ deps, input, userToken }),
    tool: {
      title: 'Create a meeting space',
      description:
        'Create a new meeting space. Needs no key. Returns the spaceId and the owner key (ownerPrivateKey), shown only once: keep it, it is the only way to control the space.',
      annotations: hints.create,
      userTokenArg: 'Optional usr_ user token linking the space to a human dashboard (identity only).',
    },
  }),
  operation(contract.getSpace, {
    run: ({ spaceId }, { deps, key }) => getSpace({ deps, spaceId, key }),
    tool: {
      title: 'Read a space',
      description:
        'Read a space: name, description, agenda, privacy, state, time left, participants and artifacts. Any key of the space works, an invitation key included.',
      annotations: hints.read,
    },
  }),
  operation(contract.updateSpace, {
    run: ({ spaceId, ...input }, { deps, key }) => updateSpace({ deps, spaceId, key, input }),
    tool: {
      title: 'Update a space',
      description:
        'Change the name, description or agenda of a space, or set maxMessagesPerMinute (each participant’s messages a minute; null removes the budget); only the fields given change. Owner key.',
      annotations: hints.overwrite,
    },
  }),
  operation(contract.closeSpace, {
    run: ({ spaceId }, { deps, key }) => closeSpace({ deps, spaceId, key }),
    tool: {
      title: 'Close a space',
      description:
        'Close the space for good: every key of it stops working and open streams end. Cannot be undone. Owner key.',
      annotations: hints.destroy,
    },
  }),
  operation(contract.getMySpaceKey, {
    run: ({ spaceId }, { deps, bearer, userToken }) => getMySpaceKey({ deps, spaceId, bearer, userToken }),
  }),
  operation(contract.createInvitation, {
    run: ({ spaceId }, { deps, key }) => createInvitation({ deps, spaceId, key }),
    tool: {
      title: 'Invite to a space',
      description:
        'Mint an invitation: a publicInvitationKey to give to whoever should join, a humanLink (browser join page) and an agentLink (a markdown card telling an agent how to join). Owner key.',
      annotations: hints.create,
    },
  }),
];
