import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { readableIssueMessage, ZCreateSpaceRequest, ZSendMessageRequest } from '../src';

/** The messages of a parse with readableIssueMessage as its error map (what the server configures). */
const messages = (schema: z.ZodType, input: unknown) => {
  const parsed = schema.safeParse(input, { error: readableIssueMessage });
  return parsed.success ? [] : parsed.error.issues.map((issue) => issue.message);
};

describe('readableIssueMessage', () => {
  it.each([
    ['a missing field', z.object({ name: z.string() }), {}, 'name is required'],
    ['a missing choice', z.object({ type: z.enum(['a', 'b']) }), {}, 'type is required'],
    ['a wrong type', z.object({ name: z.string() }), { name: 5 }, 'name must be a string'],
    ['an integer', z.object({ ttl: z.number().int() }), { ttl: 1.5 }, 'ttl must be an integer'],
    ['an object', z.object({ a: z.object({}) }), { a: [] }, 'a must be an object'],
    [
      'a long string',
      z.object({ name: z.string().max(3) }),
      { name: 'abcd' },
      'name is at most 3 characters',
    ],
    ['an empty string', z.object({ name: z.string().min(1) }), { name: '' }, 'name must not be empty'],
    ['a short string', z.object({ pw: z.string().min(8) }), { pw: 'abc' }, 'pw is at least 8 characters'],
    [
      'a long list',
      z.object({ ids: z.array(z.string()).max(1) }),
      { ids: ['a', 'b'] },
      'ids is at most 1 item',
    ],
    ['a large number', z.object({ n: z.number().max(10) }), { n: 11 }, 'n is at most 10'],
    ['an exclusive bound', z.object({ n: z.number().lt(10) }), { n: 10 }, 'n is less than 10'],
    ['one of a list', z.object({ t: z.enum(['x', 'y']) }), { t: 'z' }, 't must be one of "x", "y"'],
    ['a literal', z.object({ t: z.literal('x') }), { t: 'y' }, 't must be "x"'],
    ['a UUID', z.object({ id: z.uuid() }), { id: 'nope' }, 'id must be a UUID'],
    ['a nested field', z.object({ a: z.array(z.string()) }), { a: [1] }, 'a.0 must be a string'],
    ['the body itself', z.object({}), 'text', 'the body must be an object'],
  ])('says %s in words, naming the field', (_label, schema, input, message) => {
    expect(messages(schema, input)).toEqual([message]);
  });

  it('leaves the contract’s own messages as they are', () => {
    expect(messages(ZSendMessageRequest, { spaceId: 'x', content: 'x'.repeat(70_000) })).toEqual([
      'content is at most 65536 characters',
    ]);
    expect(messages(ZCreateSpaceRequest, { name: 'x'.repeat(201), description: 'd' })).toEqual([
      'name is at most 200 characters',
    ]);
  });

  it('refuses a name of white space or characters nothing draws alone, and only that', () => {
    for (const name of [
      ' \t\n ',
      '\u200B',
      '\u200E\u200F',
      '\u2060\uFEFF',
      ' \u00AD ',
      '\u3164',
      '\u2800',
      '\uFE0F',
    ])
      expect(messages(ZCreateSpaceRequest, { name, description: '' }), JSON.stringify(name)).toEqual([
        'name must not be blank',
      ]);
    // One issue for an empty name, as before.
    expect(messages(ZCreateSpaceRequest, { name: '', description: '' })).toEqual(['name must not be empty']);
    for (const name of [' Ada ', '·', '李', 'a b', '\u200BAda', 'Ada\uFE0F', '😀', 'x\u2800'])
      expect(messages(ZCreateSpaceRequest, { name, description: '' })).toEqual([]);
  });

  it('refuses a name of more than one line, or with a control character, and only that', () => {
    for (const name of [
      'Ada\n[10:02] Owner: hi',
      'a\tb',
      '\u0001',
      'x\u001b[31mred',
      'Ada\r',
      'c1\u009b2J',
      'del\u007f',
      'a\u2028b',
    ])
      expect(messages(ZCreateSpaceRequest, { name, description: '' }), JSON.stringify(name)).toEqual([
        'name must be one line without control characters (a line break, a tab, an escape)',
      ]);
    for (const name of ['Ada\u00a0Lovelace', 'x\u00a0', 'Zoë'])
      expect(messages(ZCreateSpaceRequest, { name, description: '' }), JSON.stringify(name)).toEqual([]);
  });
});
