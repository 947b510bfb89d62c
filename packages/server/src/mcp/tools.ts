import {
  createSpace,
  getSpace,
  ZCreateSpaceRequest,
  ZCreateSpaceResult,
  ZSpaceIdParam,
  ZSpaceView,
} from '@convene/core';
import { z } from 'zod';
import { defineTool, hints, keyArg, type Tool } from './tool';

/**
 * The MCP tool table: one tool per operation a key holder can perform, named in snake_case after
 * its operationId, each calling the same core use case as the REST procedure.
 */
export const tools: Tool[] = [
  defineTool({
    name: 'create_space',
    title: 'Create a meeting space',
    description:
      'Create a new meeting space. Needs no key. Returns the spaceId and the owner key (ownerPrivateKey), shown only once: keep it, it is the only way to control the space.',
    input: ZCreateSpaceRequest.extend({
      userToken: z
        .string()
        .optional()
        .describe('Optional usr_ user token linking the space to a human dashboard (identity only).'),
    }),
    output: ZCreateSpaceResult,
    annotations: hints.create,
    run: ({ userToken, ...input }, ctx) =>
      createSpace({ deps: ctx.deps, input, userToken: userToken ?? ctx.userToken }),
  }),
  defineTool({
    name: 'get_space',
    title: 'Read a space',
    description:
      'Read a space: name, description, agenda, privacy, state, time left, participants and artifacts. Any key of the space works, an invitation key included.',
    input: ZSpaceIdParam.extend(keyArg),
    output: ZSpaceView,
    annotations: hints.read,
    run: ({ spaceId }, ctx) => getSpace({ deps: ctx.deps, spaceId, key: ctx.key }),
  }),
];
