import { describe, expect, it } from 'vitest';
import { expectError, expectOk, useServer } from './helpers';

const { h } = useServer();

/**
 * A REST body field that is a slip of one the operation takes: refused with the name meant, as an
 * MCP tool refuses such an argument (mcp.test.ts), since dropping it did something else than asked
 * and said it had succeeded. Any other unknown name is still ignored, and every unknown query
 * parameter (decisions.md).
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

  it('refuses what updateSpace cannot change, saying why, rather than answer {ok: true} and change nothing of it', async () => {
    const space = await h.createSpace();
    const url = `/hub/space/${space.spaceId}`;
    for (const [body, why] of [
      [
        { privacy: 'private' },
        /^privacy cannot be changed: a space stays public or private as it was created/,
      ],
      [{ name: 'Renamed', ttl: 3600 }, /^ttl cannot be changed: a space lives the ttl it was created with/],
      // Beside every field it takes and one it ignores: still refused.
      [
        {
          name: 'N',
          description: 'D',
          agenda: 'A',
          maxMessagesPerMinute: 5,
          clientTag: 'x',
          privacy: 'public',
        },
        /^privacy cannot be changed/,
      ],
    ] as const) {
      const refused = await h.put(url, { key: space.ownerKey, body });
      expectError(refused, 400, 'invalid_request');
      expect(refused.body.error).toMatch(why);
      expect(refused.body.issues).toEqual([
        { path: [Object.keys(body).at(-1)], message: refused.body.error },
      ]);
    }
    // Nothing given with them changed.
    const read = await h.get(url, { key: space.ownerKey });
    expect({ name: read.body.name, privacy: read.body.privacy }).toEqual({
      name: 'Test space',
      privacy: 'public',
    });
    // createSpace takes them, as before.
    expectOk(
      await h.post('/hub/space', { body: { name: 'P', description: 'd', privacy: 'private', ttl: 3600 } }),
    );
  });

  it('ignores every unknown query parameter, even one a slip of a parameter the read takes (decisions.md)', async () => {
    const space = await h.createSpace();
    const messages = `/hub/space/${space.spaceId}/messages`;
    expectOk(await h.post(messages, { key: space.ownerKey, body: { content: 'before 2030' } }));
    // Read as if they were not there: no filter, the default page, no wait.
    for (const query of ['timestamps=2030-01-01T00:00:00Z', 'Timestamp=2030-01-01T00:00:00Z', 'Limit=0']) {
      const read = await h.get(`${messages}?${query}`, { key: space.ownerKey });
      expectOk(read);
      expect(
        read.body.messages.map((m: { content: string }) => m.content),
        query,
      ).toEqual(['before 2030']);
    }
    const inbox = `/hub/space/${space.spaceId}/inbox`;
    for (const query of ['timeout=1', 'waitSeconds=1', 'Limit=5'])
      expectOk(await h.get(`${inbox}?${query}`, { key: space.ownerKey }));
    // Before the key is looked at, nothing refuses a name: a bad key is the 401 it always was.
    expectError(await h.get(`${messages}?Timestamp=x`, { key: 'x' }), 401);
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
