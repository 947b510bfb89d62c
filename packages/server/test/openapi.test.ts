import { operations as contract, errorCodes } from '@convene/contract';
import { Validator } from '@seriousme/openapi-schema-validator';
import { beforeAll, describe, expect, it } from 'vitest';
import { neverReplayed } from '../src/api';
import { expectError, expectOk, useServer } from './helpers';

const { h } = useServer();
let doc: any;
beforeAll(async () => {
  const res = await h.get('/openapi.json');
  expectOk(res);
  doc = res.body;
});

/** The headers of every answer (src/http: versioning, rate limit, request id). */
const EVERY_ANSWER = [
  'API-Version',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'RateLimit-Policy',
  'Request-Id',
];

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

const SCHEMA_REF = '#/components/schemas/';

/**
 * Calls `visit` on every object under `node` with where it is; with `followed`, also on the
 * component schemas it refers to, each once (their names go into `followed`).
 */
function eachObject(
  node: unknown,
  at: string,
  visit: (node: any, at: string) => void,
  followed?: Set<string>,
): void {
  if (Array.isArray(node)) {
    for (const [i, item] of node.entries()) eachObject(item, `${at}/${i}`, visit, followed);
    return;
  }
  if (!node || typeof node !== 'object') return;
  visit(node, at);
  const { $ref } = node as { $ref?: unknown };
  if (followed && typeof $ref === 'string' && $ref.startsWith(SCHEMA_REF) && !followed.has($ref)) {
    followed.add($ref);
    eachObject(doc.components.schemas[$ref.slice(SCHEMA_REF.length)], $ref, visit, followed);
  }
  for (const [key, value] of Object.entries(node)) eachObject(value, `${at}/${key}`, visit, followed);
}

/** Every operation of the document with its path and method. */
function operations(): { path: string; method: string; op: any }[] {
  return Object.entries(doc.paths ?? {}).flatMap(([path, item]: [string, any]) =>
    METHODS.filter((m) => item[m]).map((method) => ({ path, method, op: item[method] })),
  );
}
const byId = (operationId: string) => operations().find((o) => o.op.operationId === operationId);

/** The operations of the specification this capability serves, with their method, path and statuses. */
const SPACE_OPERATIONS: [string, string, string, string[]][] = [
  ['createSpace', 'post', '/hub/space', ['200', '400', '429']],
  ['getSpace', 'get', '/hub/space/{spaceId}', ['200', '401', '404', '429']],
  ['updateSpace', 'put', '/hub/space/{spaceId}', ['200', '400', '401', '404', '409', '429']],
  ['closeSpace', 'delete', '/hub/space/{spaceId}', ['200', '401', '404', '409', '429']],
  ['createInvitation', 'post', '/hub/space/{spaceId}/invite', ['200', '401', '404', '409', '429']],
  ['joinSpace', 'post', '/hub/space/{spaceId}/join', ['200', '202', '400', '401', '404', '409', '429']],
  ['getJoinStatus', 'get', '/hub/space/{spaceId}/join/{participantId}', ['200', '202', '401', '404', '429']],
  [
    'approveParticipant',
    'post',
    '/hub/space/{spaceId}/participants/{participantId}/approve',
    ['200', '401', '404', '409', '429'],
  ],
  [
    'kickParticipant',
    'post',
    '/hub/space/{spaceId}/participants/{participantId}/kick',
    ['200', '401', '404', '409', '429'],
  ],
  [
    'muteParticipant',
    'post',
    '/hub/space/{spaceId}/participants/{participantId}/mute',
    ['200', '401', '404', '409', '429'],
  ],
  [
    'unmuteParticipant',
    'post',
    '/hub/space/{spaceId}/participants/{participantId}/unmute',
    ['200', '401', '404', '409', '429'],
  ],
  ['leaveSpace', 'post', '/hub/space/{spaceId}/leave', ['200', '401', '404', '409', '429']],
];

/**
 * Statuses the specification's general rules give operations beyond their tables: 400 for an
 * unsupported API-Version, 429 (the rate limit covers every endpoint), 503 when the database
 * cannot be reached, and 422 on a write whose Idempotency-Key comes back with another body.
 */
function policyStatuses(method: string, op: any): string[] {
  const replayed =
    ['post', 'put', 'patch', 'delete'].includes(method) && op?.['x-idempotent-replay'] === true;
  // The health probe alone counts against no rate limit (decisions.md): no 429 to promise.
  const limited = op?.operationId !== 'health';
  return ['400', ...(limited ? ['429'] : []), '503', ...(replayed ? ['422'] : [])];
}

describe('/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).toMatch(/^3\.1\./);
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 2)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    // The validator does catch a broken document: a response without its required description.
    const broken = structuredClone(doc);
    delete broken.paths['/hub/space'].post.responses['200'].description;
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });

  it('marks a request body required only when it has a required field', () => {
    expect(byId('createSpace')?.op.requestBody.required).toBe(true);
    expect(byId('joinSpace')?.op.requestBody.required).toBe(true);
    expect(byId('createApiToken')?.op.requestBody.required).toBe(false);
    expect(byId('startLink')?.op.requestBody.required).toBe(false);
  });

  it('documents the shared policies on every operation', () => {
    for (const { method, op } of operations()) {
      const names = (op.parameters ?? []).map((p: any) => p.$ref ?? p.name);
      expect(names).toContain('#/components/parameters/ApiVersion');
      // Only where a retry with it is replayed, as the parameter promises.
      expect(names.includes('#/components/parameters/IdempotencyKey'), op.operationId).toBe(
        ['post', 'put', 'patch', 'delete'].includes(method) && op['x-idempotent-replay'] === true,
      );
      for (const response of Object.values(op.responses) as any[]) {
        expect(Object.keys(response.headers ?? {})).toEqual(expect.arrayContaining(EVERY_ANSWER));
      }
    }
    expect(doc.components.parameters.IdempotencyKey.schema.maxLength).toBe(255);
  });

  it('promises a replay (Idempotency-Key) on exactly the writes the server replays, and says the others never are', () => {
    const contracts = Object.values(contract);
    const documented = operations().filter(({ method }) =>
      ['post', 'put', 'patch', 'delete'].includes(method),
    );
    for (const { method, path, op } of documented) {
      const entry = contracts.find((c) => c.operationId === op.operationId);
      // What the idempotency hook skips (api.ts), and the anonymous writes it has no caller for.
      const replayed =
        entry !== undefined &&
        entry.security.length > 0 &&
        !neverReplayed.includes(`${method.toUpperCase()} ${path}`);
      const names = (op.parameters ?? []).map((p: any) => p.$ref ?? p.name);
      expect(names.includes('#/components/parameters/IdempotencyKey'), op.operationId).toBe(replayed);
      expect(op['x-idempotent-replay'], op.operationId).toBe(replayed ? true : undefined);
      // Raw routes outside the contract (/mcp, /a2a) are promised nothing either way.
      if (entry && !replayed)
        expect(op.description, op.operationId).toMatch(/Never replayed: .*a retry acts again/);
    }
    for (const id of ['createSpace', 'startLink'])
      expect(
        byId(id)?.op.parameters.map((p: any) => p.$ref ?? p.name),
        id,
      ).not.toContain('#/components/parameters/IdempotencyKey');
    expect(doc.components.parameters.IdempotencyKey.description).toMatch(/replays the first answer/);
  });

  it('documents X-Poll-Token as REST takes it: optional, a waiting join answers pending without it', async () => {
    const param = doc.components.parameters.PollToken;
    expect(param).toMatchObject({ name: 'X-Poll-Token', in: 'header', required: false });
    expect(param.description).toMatch(
      /Without it a join still waiting answers pending \(202\) and one the owner decided 401/,
    );
    expect(byId('getJoinStatus')?.op.parameters).toContainEqual({
      $ref: '#/components/parameters/PollToken',
    });
    const space = await h.createSpace({ privacy: 'private' });
    const pending = await h.joinPending(space);
    const poll = await h.get(`/hub/space/${space.spaceId}/join/${pending.participantId}`, {
      key: pending.invitationKey,
    });
    expectOk(poll, 202);
    expect(poll.body).toEqual({ status: 'pending' });
  });

  it('documents the optional X-User-Token of createSpace and joinSpace (spec, Authentication 5), and of no other operation', () => {
    const param = doc.components.parameters.UserToken;
    expect(param).toMatchObject({ name: 'X-User-Token', in: 'header', required: false });
    expect(param.description).toMatch(/grants no permission in the space, and an invalid token is ignored/);
    const taking = Object.values(doc.paths as Record<string, Record<string, any>>)
      .flatMap((item) => Object.values(item))
      .filter((op) => op?.parameters?.some((p: any) => p.$ref === '#/components/parameters/UserToken'))
      .map((op) => op.operationId)
      .sort();
    expect(taking).toEqual(['createSpace', 'joinSpace']);
  });

  it('resolves every $ref to a component', () => {
    const refs = new Set<string>();
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === 'object') {
        for (const [k, v] of Object.entries(node)) {
          if (k === '$ref' && typeof v === 'string') refs.add(v);
          else walk(v);
        }
      }
    };
    walk(doc.paths);
    walk(doc.components);
    expect(refs.size).toBeGreaterThan(0);
    for (const ref of refs) {
      const target = ref
        .replace(/^#\//, '')
        .split('/')
        .reduce((node: any, part) => node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
      expect(target, ref).toBeDefined();
    }
  });

  it('publishes no error schema the service never answers (the generator adds those of tRPC: {message, code, issues})', () => {
    const names = Object.keys(doc.components.schemas);
    expect(names).toContain('Error');
    expect(names.filter((name) => name.startsWith('error.'))).toEqual([]);
  });

  it('requires a code on every error, a known one or any other string, and lists and explains the known ones', async () => {
    const { Error: error, ErrorCode, KnownErrorCode } = doc.components.schemas;
    expect(error.required).toEqual(['error', 'code']);
    expect(error.properties.code).toEqual({ $ref: `${SCHEMA_REF}ErrorCode` });
    // Open: clients must take codes added later, so a validator must not refuse them.
    expect(ErrorCode.anyOf).toEqual([{ $ref: `${SCHEMA_REF}KnownErrorCode` }, { type: 'string' }]);
    expect(ErrorCode.description).toMatch(/treat one you do not know as the generic code/);
    expect(KnownErrorCode.enum).toEqual(Object.keys(errorCodes));
    for (const code of KnownErrorCode.enum) expect(KnownErrorCode.description).toContain(`\`${code}\``);
    // Every operation's errors are that body.
    for (const { op } of operations())
      for (const [status, answer] of Object.entries(op.responses) as [string, any][])
        if (Number(status) >= 400)
          expect(answer.content['application/json'].schema).toEqual({ $ref: `${SCHEMA_REF}Error` });
    const refused = await h.get('/hub/space/00000000-0000-4000-8000-000000000000', { key: 'f'.repeat(64) });
    expectError(refused, 404, 'not_found');
  });

  it('gives every operation a unique operationId and declares every path parameter', () => {
    const ids = operations().map((o) => o.op.operationId);
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    for (const { path, method, op } of operations()) {
      const templated = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      const declared = (op.parameters ?? []).filter((p: any) => p.in === 'path').map((p: any) => p.name);
      expect(declared.sort(), `${method.toUpperCase()} ${path}`).toEqual(templated.sort());
    }
  });

  it("names every operation of the specification by the specification's operationId", () => {
    const ids = new Set(operations().map((o) => o.op.operationId));
    const spec = [
      ...SPACE_OPERATIONS.map(([id]) => id),
      'getMySpaceKey',
      'sendMessage',
      'listMessages',
      'streamMessages',
      'createArtifact',
      'listArtifacts',
      'getArtifact',
      'writeArtifact',
      'downloadArtifact',
      'lockArtifact',
      'heartbeatArtifactLock',
      'unlockArtifact',
      'startLink',
      'pollLink',
      'createApiToken',
      'listApiTokens',
      'revokeApiToken',
    ];
    expect(spec.filter((id) => !ids.has(id))).toEqual([]);
  });

  it.each(SPACE_OPERATIONS)(
    'describes %s at %s %s with its statuses',
    (operationId, method, path, statuses) => {
      const found = byId(operationId);
      expect(found, operationId).toBeDefined();
      expect(found?.method).toBe(method);
      expect(found?.path).toBe(path);
      // The specification's statuses, and those its general rules give every operation.
      const all = new Set([...statuses, ...policyStatuses(method, found?.op)]);
      expect(Object.keys(found?.op.responses ?? {}).sort()).toEqual([...all].sort());
      for (const status of statuses.filter((s) => Number(s) >= 400)) {
        expect(found?.op.responses[status].content['application/json'].schema).toEqual({
          $ref: '#/components/schemas/Error',
        });
      }
    },
  );

  it('promises no 429 on the health probe, which no rate limit counts (its table row lists no error)', () => {
    const found = byId('health');
    expect(found?.path).toBe('/api/health');
    expect(Object.keys(found?.op.responses ?? {}).sort()).toEqual(['200', '400', '503']);
    expect(Object.keys(byId('getSpace')?.op.responses ?? {})).toContain('429');
  });

  it('declares the space key on protected operations and none on createSpace', () => {
    for (const [operationId] of SPACE_OPERATIONS) {
      const { op } = byId(operationId)!;
      if (operationId === 'createSpace') expect(op.security).toEqual([]);
      else expect(op.security, operationId).toEqual([{ spaceKey: [] }]);
    }
    expect(doc.components.securitySchemes.spaceKey).toEqual({
      type: 'apiKey',
      in: 'header',
      name: 'X-Private-Key',
    });
  });

  it('documents both answers of joinSpace and getJoinStatus, each with its own body, as the server answers them', async () => {
    const { op } = byId('joinSpace')!;
    expect(op.responses['202'].headers.Location.schema).toEqual({ type: 'string', format: 'uri' });
    expect(op.requestBody.content['application/json'].schema).toBeDefined();
    const status = byId('getJoinStatus')!.op;
    /** The component an answer's body names, and the keys a body of it must and may have. */
    const bodyOf = (operation: any, code: string) => {
      const { $ref } = operation.responses[code].content['application/json'].schema;
      const schema = doc.components.schemas[$ref.slice(SCHEMA_REF.length)];
      return {
        name: $ref.slice(SCHEMA_REF.length),
        required: schema.required,
        keys: Object.keys(schema.properties),
      };
    };
    const documented = {
      joined: bodyOf(op, '200'),
      pending: bodyOf(op, '202'),
      approved: bodyOf(status, '200'),
      waiting: bodyOf(status, '202'),
    };
    expect(documented).toEqual({
      joined: {
        name: 'JoinActive',
        required: ['participantId', 'participantPrivateKey'],
        keys: expect.any(Array),
      },
      pending: {
        name: 'JoinPending',
        required: ['participantId', 'status', 'statusUrl', 'pollToken'],
        keys: expect.any(Array),
      },
      approved: { name: 'JoinApproved', required: ['participantPrivateKey'], keys: expect.any(Array) },
      waiting: { name: 'JoinWaiting', required: ['status'], keys: expect.any(Array) },
    });
    // What the server answers: every required key, nothing the schema does not name.
    const join = async (privacy: 'public' | 'private') => {
      const space = await h.createSpace({ privacy });
      const invitationKey = await h.invite(space);
      const res = await h.post(`/hub/space/${space.spaceId}/join`, {
        key: invitationKey,
        body: { name: 'Joiner' },
      });
      expectOk(res, privacy === 'public' ? 200 : 202);
      return { space, invitationKey, body: res.body };
    };
    const answers = {
      joined: (await join('public')).body,
      ...(await (async () => {
        const { space, invitationKey, body } = await join('private');
        const poll = () =>
          h.get(`/hub/space/${space.spaceId}/join/${body.participantId}`, {
            key: invitationKey,
            headers: { 'X-Poll-Token': body.pollToken },
          });
        const waiting = await poll();
        expectOk(waiting, 202);
        const approve = await h.post(
          `/hub/space/${space.spaceId}/participants/${body.participantId}/approve`,
          { key: space.ownerKey },
        );
        expectOk(approve);
        const approved = await poll();
        expectOk(approved);
        return { pending: body, waiting: waiting.body, approved: approved.body };
      })()),
    };
    for (const [answer, { required, keys }] of Object.entries(documented)) {
      const body = answers[answer as keyof typeof answers];
      expect(Object.keys(body).sort(), answer).toEqual(expect.arrayContaining([...required].sort()));
      expect(keys, answer).toEqual(expect.arrayContaining(Object.keys(body)));
    }
  });

  it('declares every status the server answers by policy, on every operation', () => {
    for (const { method, op } of operations()) {
      const declared = Object.keys(op.responses);
      for (const status of policyStatuses(method, op).filter((s) => s !== '422'))
        expect(declared, `${op.operationId} ${status}`).toContain(status);
      for (const status of ['400', '422', '429', '503'].filter(
        (s) => declared.includes(s) && !op.responses[s].$ref,
      ))
        expect(Object.keys(op.responses[status].content ?? {}), `${op.operationId} ${status}`).toEqual([
          'application/json',
        ]);
      const write = ['post', 'put', 'patch', 'delete'].includes(method);
      expect(declared.includes('422'), `${op.operationId} 422`).toBe(
        write && op['x-idempotent-replay'] === true,
      );
    }
    // Writes made with a credential are replayed (a join to its own caller); the minting calls and
    // anonymous ones never.
    for (const id of [
      'sendMessage',
      'writeArtifact',
      'closeSpace',
      'createInvitation',
      'revokeApiToken',
      'joinSpace',
    ])
      expect(byId(id)?.op['x-idempotent-replay'], id).toBe(true);
    for (const id of ['createSpace', 'startLink', 'pollLink', 'signup', 'mcp', 'getSpace'])
      expect(byId(id)?.op['x-idempotent-replay'], id).toBeUndefined();
  });

  it('documents itself and the deprecation policy', () => {
    for (const [path, operationId] of [
      ['/openapi.json', 'getOpenApiDocument'],
      ['/.well-known/deprecation-policy', 'getDeprecationPolicy'],
    ] as const) {
      expect(doc.paths[path]?.get?.operationId, path).toBe(operationId);
      expect(doc.paths[path].get.security).toEqual([]);
      expect(doc.paths[path].get.responses['200'].content['application/json'].schema.type).toBe('object');
    }
  });

  it('declares the headers of some statuses as shared components: WWW-Authenticate on 401, Retry-After on 429 and 503, Idempotency-Replayed on what a replayed write replays', async () => {
    const headers = doc.components.headers;
    expect(headers['WWW-Authenticate']).toMatchObject({ required: true, schema: { type: 'string' } });
    expect(headers['Retry-After'].schema).toEqual({ type: 'integer', minimum: 0 });
    expect(headers['Idempotency-Replayed'].schema).toEqual({ type: 'string', enum: ['true'] });
    const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });
    for (const { op } of operations()) {
      const replays = op['x-idempotent-replay'] === true;
      for (const [status, response] of Object.entries(op.responses) as [string, any][]) {
        const at = `${op.operationId} ${status}`;
        const declared = response.headers ?? {};
        for (const name of EVERY_ANSWER) expect(declared[name], at).toEqual(ref(name));
        expect(declared['WWW-Authenticate'], at).toEqual(
          status === '401' ? ref('WWW-Authenticate') : undefined,
        );
        expect(declared['Retry-After'], at).toEqual(
          ['429', '503'].includes(status) ? ref('Retry-After') : undefined,
        );
        // A replay is of a success or a refusal: never a 422 (another body), a 429 or a 5xx.
        const replayable = replays && /^[24]/.test(status) && !['422', '429'].includes(status);
        expect(declared['Idempotency-Replayed'], at).toEqual(
          replayable ? ref('Idempotency-Replayed') : undefined,
        );
      }
    }
    expect(byId('joinSpace')?.op.responses['202'].headers.Location).toBeDefined();
    // What the server sends.
    const space = await h.createSpace();
    expectError(await h.get(`/hub/space/${space.spaceId}`), 401);
    const send = () =>
      h.post(`/hub/space/${space.spaceId}/messages`, {
        key: space.ownerKey,
        headers: { 'Idempotency-Key': 'openapi-replay' },
        body: { content: 'once' },
      });
    const first = await send();
    expectOk(first);
    expect(first.headers.get('idempotency-replayed')).toBeNull();
    const replay = await send();
    expectOk(replay);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.body.messageId).toBe(first.body.messageId);
  });

  it('leaves every answer open to the fields a later server adds; request bodies are open too, as the server ignores unknown fields', async () => {
    const closed: string[] = [];
    const seen = new Set<string>();
    const visit = (node: any, at: string) => {
      if (node.additionalProperties === false) closed.push(at);
    };
    for (const { op } of operations()) {
      eachObject(op.responses, `${op.operationId} responses`, visit, seen);
      eachObject(op.requestBody, `${op.operationId} body`, visit, seen);
    }
    expect(closed).toEqual([]);
    expect(seen).toContain('#/components/schemas/SpaceView');
    expect(seen).toContain('#/components/schemas/MessageView');
    // The server ignores a field it does not know, as the open body says.
    const created = await h.post('/hub/space', {
      body: { name: 'Open', description: 'open bodies', addedLater: true },
    });
    expectOk(created);
    const sent = await h.post(`/hub/space/${created.body.spaceId}/messages`, {
      key: created.body.ownerPrivateKey,
      body: { content: 'hello', addedLater: { nested: 1 } },
    });
    expectOk(sent);
    const listed = await h.get(`/hub/space/${created.body.spaceId}/messages`, {
      key: created.body.ownerPrivateKey,
    });
    expect(listed.body.messages.map((m: any) => m.content)).toEqual(['hello']);
    expect(listed.body.messages[0]).not.toHaveProperty('addedLater');
  });

  it('types version numbers as integers from 1 (path version, diff from and to), as answers and MCP do, while the server still reads them as before', async () => {
    const version = { type: 'integer', minimum: 1 };
    for (const [id, name] of [
      ['getArtifactVersion', 'version'],
      ['restoreArtifactVersion', 'version'],
      ['diffArtifactVersions', 'from'],
      ['diffArtifactVersions', 'to'],
    ] as const) {
      const param = byId(id)?.op.parameters.find((p: any) => p.name === name);
      expect(param?.schema, `${id} ${name}`).toMatchObject(version);
    }
    expect(doc.components.schemas.ArtifactView.properties.version.type).toBe('integer');
    // What each answers to a version that is no integer from 1 is what it answered before.
    const space = await h.createSpace();
    const artifact = await h.createArtifact(space, 'v', 'one');
    const at = `/hub/space/${space.spaceId}/artifact/${artifact}`;
    expectOk(await h.get(`${at}/versions/1`, { key: space.ownerKey }));
    for (const bad of ['abc', '0', '1.5']) {
      expectError(await h.get(`${at}/versions/${bad}`, { key: space.ownerKey }), 404);
      expectError(
        await h.get(`${at}/diff?from=${bad}&to=1`, { key: space.ownerKey }),
        bad === '0' ? 404 : 400,
      );
    }
  });

  it('gives every integer the least value its meaning has: versions and seqs from 1, counts, positions and seconds from 0', () => {
    const integers: { at: string; minimum: unknown }[] = [];
    const visit = (node: any, at: string) => {
      if (node.type === 'integer') integers.push({ at, minimum: node.minimum });
    };
    eachObject(doc.paths, '', visit);
    eachObject(doc.components, '', visit);
    expect(integers.length).toBeGreaterThan(20);
    for (const { at, minimum } of integers) {
      expect(typeof minimum, at).toBe('number');
      expect(minimum as number, at).toBeGreaterThanOrEqual(0);
      // A message's seq; not an inbox position (ackInbox's seq, lastReadSeq), where 0 is "none yet".
      if (/\/(version|baseVersion)$|\/(version|from|to)\/schema$|MessageView\/properties\/seq$/.test(at))
        expect(minimum, at).toBe(1);
    }
    const { schemas } = doc.components;
    expect(schemas.MessageView.properties.seq.minimum).toBe(1);
    expect(schemas.ArtifactSummary.properties.version.minimum).toBe(1);
    expect(schemas.ArtifactView.properties.version.minimum).toBe(1);
    expect(schemas.SpaceView.properties.suggestedPollingIntervalMs.minimum).toBe(0);
    expect(schemas.ParticipantView.properties.lastReadSeq.minimum).toBe(0);
  });

  it('documents the discovery routes', () => {
    for (const path of [
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-authorization-server',
      '/auth.md',
      '/avatar/{participantId}.svg',
    ]) {
      expect(doc.paths[path]?.get, path).toBeDefined();
      expect(doc.paths[path].get.security).toEqual([]);
    }
  });
});
