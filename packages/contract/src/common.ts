import { z } from 'zod';
import { ZErrorCode } from './error-codes';
import { limits } from './limits';
import { NAME_PATTERN } from './validation-messages';

export const ZUuid = z.string().meta({ format: 'uuid', example: '6f1c2a7e-3b4d-4e5f-8a9b-0c1d2e3f4a5b' });
export const ZDateTime = z.string().meta({ format: 'date-time', example: '2030-01-01T12:00:00.000Z' });
/**
 * A name: 1 to 200 characters, not all of them spaces (a blank name shows as nothing where people
 * and commands look for it), and one line without control characters. The pattern is the JSON
 * Schema one the OpenAPI and MCP tools publish.
 */
export const ZName = z
  .string()
  .min(1, { abort: true })
  .regex(NAME_PATTERN, { abort: true })
  .max(limits.nameMax);
export const ZText = z.string().max(limits.textMax);

/** Path ids are plain strings on the wire: a non-UUID names nothing, which core answers with 404. */
export const ZSpaceIdParam = z.object({
  spaceId: z.string().meta({
    format: 'uuid',
    description: 'The space’s id (createSpace’s spaceId); one that is not a UUID names nothing (404)',
  }),
});
export const ZParticipantPathParams = ZSpaceIdParam.extend({
  participantId: z.string().meta({
    format: 'uuid',
    description: 'The participant’s id (participantId in joinSpace’s answer and in the space’s participants)',
  }),
});

/**
 * A UUID the client sends in a body (a mention, a message replied to), in either case: anything
 * else is 400. Both cases are spelt out rather than flagged: a JSON Schema `pattern` (OpenAPI, the
 * MCP tools' input schemas) has no flags, and a client validating against it would refuse an
 * uppercase id the server takes.
 */
export const ZUuidInput = z
  .string()
  .regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, 'must be a UUID')
  .meta({ format: 'uuid' });

/**
 * `wait`: a long poll, in seconds (0 to 60). A query parameter is a string on the wire: numbers
 * in text are read as numbers.
 */
export const ZWaitQuery = z.coerce
  .number()
  .min(0)
  .max(limits.waitMaxSeconds)
  .meta({
    description: `Long poll: when nothing new is there yet, wait up to this many seconds (at most ${limits.waitMaxSeconds}) and answer as soon as something arrives`,
  });

export const ZOk = z.object({ ok: z.boolean() }).meta({ id: 'OkResult' });
export type TOk = z.infer<typeof ZOk>;

/** One rule a request broke, as a 400's `issues` lists them. */
export const ZValidationIssue = z
  .object({
    path: z
      .array(z.union([z.string(), z.number()]))
      .meta({ description: 'Where the value is in the request: field names and array indexes' }),
    message: z.string().meta({ description: 'What is wrong with it' }),
  })
  .meta({ id: 'ValidationIssue' });
export type TValidationIssue = z.infer<typeof ZValidationIssue>;

export const ZError = z
  .object({
    error: z.string().meta({ description: 'What went wrong, for a human: its text may change' }),
    // Every answer of the service carries it (the OpenAPI document requires it); a client may
    // still meet an error body without it, from a proxy or another server.
    code: ZErrorCode.optional(),
    lockedBy: ZUuid.optional().meta({ description: 'On 423: participantId of the current lock holder' }),
    lockedByName: z
      .string()
      .optional()
      .meta({ description: 'On 423 with lockedBy: the lock holder’s name (names need not be unique)' }),
    issues: z.array(ZValidationIssue).optional().meta({
      description: 'On 400 for a request that broke its schema: each value at fault, and why',
    }),
  })
  .catchall(z.unknown())
  .meta({ id: 'Error' });

/** A request that takes no input (body-less POST/DELETE, or GET with only path params). */
export const ZEmpty = z.object({});
