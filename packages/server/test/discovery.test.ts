import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { expectError, expectOk, useServer } from './helpers';
import { mintToken, signup } from './helpers/accounts';

const { srv, h } = useServer();

describe('/.well-known/oauth-protected-resource', () => {
  it('names the resource, its authorization server and the key header (RFC 9728)', async () => {
    const res = await h.get('/.well-known/oauth-protected-resource');
    expectOk(res);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      resource: srv.url,
      resource_name: 'Convene',
      resource_documentation: `${srv.url}/auth.md`,
      authorization_servers: [srv.url],
      bearer_methods_supported: ['header'],
      credential_header: 'X-Private-Key',
      credential_types_supported: ['api_key'],
    });
  });

  it('is where the WWW-Authenticate header of every 401 points', async () => {
    const space = await h.createSpace();
    const invitation = await h.invite(space);
    const p = await h.joinActive(space);
    const unauthorized = [
      await h.get(`/hub/space/${space.spaceId}`),
      await h.put(`/hub/space/${space.spaceId}`, { key: p.key, body: { name: 'x' } }),
      await h.post(`/hub/space/${space.spaceId}/leave`, { key: invitation }),
      await h.post(`/hub/space/${space.spaceId}/join`, { key: space.ownerKey, body: { name: 'x' } }),
    ];
    for (const res of unauthorized) {
      expectError(res, 401);
      expect(res.headers.get('www-authenticate')).toBe(
        `Bearer resource_metadata="${srv.url}/.well-known/oauth-protected-resource"`,
      );
    }
    const url = /resource_metadata="([^"]+)"/.exec(
      unauthorized[0]?.headers.get('www-authenticate') ?? '',
    )?.[1];
    const metadata = await fetch(url ?? '');
    expect(metadata.status).toBe(200);
    expect(((await metadata.json()) as any).resource).toBe(srv.url);
  });
});

describe('/.well-known/oauth-authorization-server', () => {
  it('carries the issuer and the exact agent_auth block (RFC 8414)', async () => {
    const res = await h.get('/.well-known/oauth-authorization-server');
    expectOk(res);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body.issuer).toBe(srv.url);
    expect(res.body.agent_auth).toEqual({
      skill: `${srv.url}/auth.md`,
      register_uri: `${srv.url}/hub/space`,
      identity_types_supported: ['anonymous', 'identity_assertion'],
      anonymous: { credential_types_supported: ['api_key'], credential_header: 'X-Private-Key' },
      identity_assertion: {
        assertion_types_supported: [],
        device_authorization_uri: `${srv.url}/hub/link/start`,
        token_uri: `${srv.url}/hub/link/poll`,
        verification_uri: `${srv.url}/link`,
        credential_types_supported: ['api_key'],
        credential_header: 'X-User-Token',
      },
    });
    expect(res.body.response_types_supported).toEqual([]);
    expect(res.body.jwks_uri).toBe(`${srv.url}/.well-known/jwks.json`);
    const jwks = await h.get('/.well-known/jwks.json');
    expectOk(jwks);
    expect(jwks.body.keys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519' });
  });

  it('points at a register_uri that registers without credentials', async () => {
    const { body } = await h.get('/.well-known/oauth-authorization-server');
    const res = await fetch(body.agent_auth.register_uri, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Via discovery', description: 'registered from agent_auth' }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).ownerPrivateKey).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('/auth.md', () => {
  it('serves the guide as markdown with absolute URLs', async () => {
    const res = await h.get('/auth.md');
    expectOk(res);
    expect(res.headers.get('content-type')).toMatch(/^text\/markdown/);
    const guide = res.text;
    expect(guide).toMatch(/^# /);
    expect(guide).not.toContain('{PUBLIC_URL}');
    expect(guide).toContain(`${srv.url}/.well-known/oauth-protected-resource`);
    expect(guide).toContain(`${srv.url}/.well-known/oauth-authorization-server`);
  });

  it('walks an agent through every step, in order', async () => {
    const guide = (await h.get('/auth.md')).text;
    const steps = [
      /## 1\. Discover/,
      /## 2\. Pick an identity/,
      /## 3\. Register: create or join a space/,
      /## 4\. Link a human/,
      /## 5\. Use your keys/,
      /## 6\. When a request fails/,
      /## 7\. Revocation/,
    ];
    const positions = steps.map((step) => guide.search(step));
    expect(positions.every((p) => p >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    for (const needle of [
      'anonymous',
      'identity_assertion',
      'id-jag',
      `${srv.url}/hub/space`,
      '/join',
      '202',
      'Location',
      `${srv.url}/hub/link/start`,
      `${srv.url}/hub/link/poll`,
      'verificationUriComplete',
      '410',
      'X-Private-Key',
      'X-User-Token',
      'WWW-Authenticate',
      '401',
      `DELETE ${srv.url}/hub/me/tokens/$TOKEN_ID`,
    ]) {
      expect(guide, needle).toContain(needle);
    }
  });

  it('says what a join poll without X-Poll-Token answers, as REST answers it: pending while waiting, 401 once decided', async () => {
    const space = await h.createSpace({ privacy: 'private' });
    const pending = await h.joinPending(space);
    const poll = () =>
      h.get(`/hub/space/${space.spaceId}/join/${pending.participantId}`, { key: pending.invitationKey });
    expectOk(await poll(), 202);
    await h.post(`/hub/space/${space.spaceId}/participants/${pending.participantId}/approve`, {
      key: space.ownerKey,
    });
    expectError(await poll(), 401);
    const guide = (await h.get('/auth.md')).text;
    expect(guide).toMatch(
      /A poll without it answers `202 \{ "status": "pending" \}` while the join waits and\s+`401` once the owner decided/,
    );
    expect(guide).not.toMatch(/without it is `401`/);
  });

  it('names every URL that takes a key (each `key` query parameter of /openapi.json) and which key it may carry', async () => {
    const guide = (await h.get('/auth.md')).text;
    const doc = (await h.get('/openapi.json')).body as any;
    const keyed = Object.entries(doc.paths).flatMap(([path, item]: [string, any]) =>
      Object.values(item).some((op: any) =>
        (op?.parameters ?? []).some((p: any) => p.in === 'query' && p.name === 'key'),
      )
        ? [path]
        : [],
    );
    expect(keyed.sort()).toEqual([
      '/hub/space/{spaceId}/agent-card.json',
      '/hub/space/{spaceId}/agent.md',
      '/hub/space/{spaceId}/messages/stream',
    ]);
    for (const path of keyed)
      expect(guide).toMatch(
        new RegExp(`${srv.url}${path.replace('{spaceId}', '\\$SPACE_ID')}\\?key=\\$(INVITATION_)?KEY`),
      );
    expect(guide).toContain('Only three URLs may carry one');
    expect(guide).not.toContain('never put a space key in a URL other than the stream');
  });

  it('gives every step as an absolute URL, never a path template', async () => {
    const guide = (await h.get('/auth.md')).text;
    expect(guide.replaceAll(`${srv.url}/hub/`, '')).not.toContain('/hub/');
    expect(guide).not.toMatch(/\{\w+\}/);
    // The rate limit as decisions.md has it: per verified credential, else per address.
    const limit = guide.split('\n').find((line) => line.startsWith('| `429`'));
    expect(limit).toContain(
      '`RATE_LIMIT_MAX` requests per `RATE_LIMIT_WINDOW_S` seconds (300 per 60 s by default)',
    );
    expect(limit).toContain(
      'per client: your credential once it is verified, on a route that reads it, else your remote address',
    );
  });

  it('has approve, close, leave and token revocation commands that work pasted into bash', async () => {
    const guide = (await h.get('/auth.md')).text;
    const lines = [...guide.matchAll(/```sh\n([\s\S]*?)```/g)]
      .flatMap((m) => m[1]!.replaceAll('\\\n', '').split('\n'))
      .map((line) => line.trim());
    const command = (needle: string) => lines.find((line) => line.includes(needle))!;
    /** Runs a line of the guide in bash with its variables set; resolves with what it prints. */
    const run = async (line: string, env: Record<string, string>) =>
      (await promisify(execFile)('bash', ['-c', line], { env: { ...process.env, ...env } })).stdout;

    const space = await h.createSpace({ privacy: 'private' });
    const waiting = await h.joinPending(space);
    const env = { SPACE_ID: space.spaceId, OWNER_KEY: space.ownerKey };
    const ok = JSON.stringify({ ok: true });
    expect(await run(command('/approve'), { ...env, PARTICIPANT_ID: waiting.participantId })).toBe(ok);
    const participant = await h.joinActive(space);
    expect(await run(command('/leave'), { ...env, PARTICIPANT_KEY: participant.key })).toBe(ok);
    expect(await run(command(`-X DELETE ${srv.url}/hub/space/`), env)).toBe(ok);
    expectError(await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey }), 401);

    const human = await signup(h);
    const token = await mintToken(h, human);
    // 204: nothing printed; the token is revoked.
    expect(await run(command('/hub/me/tokens/'), { TOKEN_ID: token.id, DASHBOARD_JWT: human.jwt })).toBe('');
    const listed = await h.get('/hub/me/tokens', { headers: human.auth });
    expect(listed.body).toEqual([expect.objectContaining({ id: token.id, revoked: true })]);
  });
});

describe('/avatar/{participantId}.svg', () => {
  const id = '6f1c2a7e-3b4d-4e5f-8a9b-0c1d2e3f4a5b';

  it('draws a deterministic identicon, publicly', async () => {
    const a = await h.get(`/avatar/${id}.svg`);
    expectOk(a);
    expect(a.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(a.text).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]*>.*<\/svg>$/s);
    expect(a.text).toContain('<rect');
    const again = await h.get(`/avatar/${id}.svg`);
    expect(again.text).toBe(a.text);
    // Case does not make a different participant.
    expect((await h.get(`/avatar/${id.toUpperCase()}.svg`)).text).toBe(a.text);
    const other = await h.get('/avatar/0b7d6f30-1c2e-4f3a-9b8c-7d6e5f4a3b2c.svg');
    expectOk(other);
    expect(other.text).not.toBe(a.text);
  });

  it('is where every avatarUrl points', async () => {
    const space = await h.createSpace();
    const { body } = await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
    const res = await fetch(body.participants[0].avatarUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(await res.text()).toContain(space.ownerId);
  });

  it('answers a JSON 404 for anything but a UUID with .svg', async () => {
    for (const path of ['/avatar/not-a-uuid.svg', `/avatar/${id}`, `/avatar/${id}.png`, '/avatar/.svg']) {
      expectError(await h.get(path), 404);
    }
  });
});
