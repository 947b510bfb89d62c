import { describe, expect, it } from 'vitest';
import { expectError, expectOk, useServer } from './helpers';

const { h } = useServer();

/**
 * A REST body field or a read's query parameter that is a slip of one the operation takes: refused
 * with the name meant, as an MCP tool refuses such an argument (mcp.test.ts), since dropping it did
 * something else than asked and said it had succeeded. Any other unknown name is still ignored.
 */
describe('fields an operation does not take', () => {
  it('refuses a slip of a body field, naming the one meant, and creates or sends nothing', async () => {
    // `private` for `privacy`: the space was created public.
    const refused = await h.post('/hub/space', {
      body: { name: 'Board', description: 'secret plans', private: true },
    });
    expectError(refused, 400, 'invalid_request');
    expect(refused.body.error).toBe('unknown field "private": did you mean "privacy"?');
    expect(refused.body.issues).toEqual([{ path: ['private'], message: refused.body.error }]);

    const space = await h.createSpace();
    const messages = `/hub/space/${space.spaceId}/messages`;
    // `mention` for `mentions`: the message mentioned nobody; `spaceID` beside the path's spaceId
    // is no slip of a name not given, but `replyto` is one of `replyTo`.
    for (const [field, meant] of [
      ['mention', 'mentions'],
      ['replyto', 'replyTo'],
      ['reply', 'replyTo'],
    ] as const) {
      const slip = await h.post(messages, {
        key: space.ownerKey,
        body: { content: 'hello', [field]: [space.ownerId] },
      });
      expectError(slip, 400, 'invalid_request');
      expect(slip.body.error, field).toBe(`unknown field "${field}": did you mean "${meant}"?`);
    }
    const listed = await h.get(messages, { key: space.ownerKey });
    expect(listed.body.messages).toEqual([]);

    // The same on a write served by the OpenAPI adapter rather than a direct route.
    const update = await h.put(`/hub/space/${space.spaceId}`, {
      key: space.ownerKey,
      body: { descripton: 'typo' },
    });
    expectError(update, 400, 'invalid_request');
    expect(update.body.error).toBe('unknown field "descripton": did you mean "description"?');
    const read = await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
    expect(read.body.description).not.toBe('typo');
  });

  it('refuses a slip of a read’s query parameter, a wait’s other name too', async () => {
    const space = await h.createSpace();
    const inbox = `/hub/space/${space.spaceId}/inbox`;
    // Each would have waited the default, or not at all, instead of what was asked.
    for (const [query, meant] of [
      ['timeout=1', 'wait'],
      ['waitSeconds=1', 'wait'],
      ['Limit=5', 'limit'],
    ] as const) {
      const refused = await h.get(`${inbox}?${query}`, { key: space.ownerKey });
      expectError(refused, 400, 'invalid_request');
      expect(refused.body.error).toBe(
        `unknown query parameter "${query.split('=')[0]}": did you mean "${meant}"?`,
      );
    }
    const since = await h.get(`/hub/space/${space.spaceId}/messages?timestamps=2030-01-01T00:00:00Z`, {
      key: space.ownerKey,
    });
    expectError(since, 400, 'invalid_request');
    expect(since.body.error).toBe('unknown query parameter "timestamps": did you mean "timestamp"?');
  });

  it('ignores a name far from every one the operation takes, and one given beside the name it resembles', async () => {
    // A client's own fields, or a newer client's that this server does not know yet.
    const created = await h.post('/hub/space', {
      body: { name: 'Board', description: 'd', privacy: 'private', clientTag: 'x', reasoning: 'why' },
    });
    expectOk(created);
    const space = await h.createSpace();
    const messages = `/hub/space/${space.spaceId}/messages`;
    // `mentions` is given: `mention` beside it is no slip of a name left out.
    expectOk(
      await h.post(messages, {
        key: space.ownerKey,
        body: { content: 'hello', mentions: [space.ownerId], mention: 'x', to: 'all' },
      }),
    );
    expectOk(await h.get(`${messages}?_=12345`, { key: space.ownerKey }));
    const read = await h.get(`/hub/space/${created.body.spaceId}`, { key: created.body.ownerPrivateKey });
    expect(read.body.privacy).toBe('private');
  });
});
