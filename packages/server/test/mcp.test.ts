import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  expectError,
  expectOk,
  Harness,
  onPostgres,
  startTestServer,
  useServer,
  withServer,
} from './helpers';
import { callError, callOk, connectMcp } from './helpers/mcp';

const { srv, h } = useServer();
let mcp: Client;
beforeAll(async () => {
  mcp = await connectMcp(srv.url);
});
afterAll(() => mcp?.close());

/** The whole story through tools only; `keyFor` decides how each call carries its key. */
async function storyThroughTools(
  connect: (key?: string) => Promise<Client>,
  keyArg: (key: string) => object,
) {
  const anon = await connect();
  const created = await callOk(anon, 'create_space', {
    name: 'Tool story',
    description: 'Planning through MCP',
    privacy: 'private',
  });
  const { spaceId, ownerPrivateKey: ownerKey, ownerId } = created;
  const owner = await connect(ownerKey);
  const invitation = await callOk(owner, 'create_invitation', { spaceId, ...keyArg(ownerKey) });
  expect(invitation.agentLink).toBe(
    `${srv.url}/hub/space/${spaceId}/agent.md?key=${encodeURIComponent(invitation.publicInvitationKey)}`,
  );

  // A private space: the joiner waits, the owner approves, the joiner polls its key.
  const guest = await connect(invitation.publicInvitationKey);
  const seen = await callOk(guest, 'get_space', { spaceId, ...keyArg(invitation.publicInvitationKey) });
  expect(seen.name).toBe('Tool story');
  const joined = await callOk(guest, 'join_space', {
    spaceId,
    name: 'Agent B',
    role: 'writer',
    ...keyArg(invitation.publicInvitationKey),
  });
  expect(joined.status).toBe('pending');
  expect(joined.pollToken).toMatch(/^poll_/);
  const waiting = await callOk(guest, 'get_join_status', {
    spaceId,
    participantId: joined.participantId,
    pollToken: joined.pollToken,
    ...keyArg(invitation.publicInvitationKey),
  });
  expect(waiting).toEqual({ status: 'pending' });
  await callOk(owner, 'approve_participant', {
    spaceId,
    participantId: joined.participantId,
    ...keyArg(ownerKey),
  });
  // Anyone else holding the invitation key and the joiner's id gets nothing.
  await callError(
    guest,
    'get_join_status',
    {
      spaceId,
      participantId: joined.participantId,
      pollToken: `poll_${'x'.repeat(43)}`,
      ...keyArg(invitation.publicInvitationKey),
    },
    404,
  );
  const approved = await callOk(guest, 'get_join_status', {
    spaceId,
    participantId: joined.participantId,
    pollToken: joined.pollToken,
    ...keyArg(invitation.publicInvitationKey),
  });
  const guestKey: string = approved.participantPrivateKey;
  expect(guestKey).toMatch(/^[0-9a-f]{64}$/);
  const participant = await connect(guestKey);

  // Talk.
  const sent = await callOk(participant, 'send_message', {
    spaceId,
    content: 'Hello from B',
    ...keyArg(guestKey),
  });
  expect(sent.messageId).toMatch(/^[0-9a-f-]{36}$/);
  expect(sent.participants.map((p: { name: string }) => p.name)).toContain('Agent B');
  await callOk(owner, 'send_message', { spaceId, content: '**Welcome**', type: 'html', ...keyArg(ownerKey) });
  const page = await callOk(owner, 'list_messages', { spaceId, ...keyArg(ownerKey) });
  expect(page.messages.map((m: { content: string }) => m.content)).toEqual(['Hello from B', '**Welcome**']);
  expect(page.messages[0]).toMatchObject({
    senderId: joined.participantId,
    senderName: 'Agent B',
    isOwner: false,
  });
  const none = await callOk(participant, 'list_messages', {
    spaceId,
    timestamp: page.cursor,
    ...keyArg(guestKey),
  });
  expect(none.messages).toEqual([]);
  expect(none.cursor).toBe(page.cursor);

  // Co-edit under the lock.
  const artifact = await callOk(participant, 'create_artifact', {
    spaceId,
    name: 'Plan',
    type: 'markdown',
    content: '# Plan\n',
    ...keyArg(guestKey),
  });
  expect(artifact).toMatchObject({ version: 1, createdBy: joined.participantId });
  const lock = await callOk(participant, 'lock_artifact', {
    spaceId,
    artifactId: artifact.id,
    ...keyArg(guestKey),
  });
  expect(lock.lockedBy).toBe(joined.participantId);
  const locked = await callError(
    owner,
    'lock_artifact',
    { spaceId, artifactId: artifact.id, ...keyArg(ownerKey) },
    423,
  );
  expect(locked.lockedBy).toBe(joined.participantId);
  const written = await callOk(participant, 'write_artifact', {
    spaceId,
    artifactId: artifact.id,
    content: '# Plan\n\n1. Ship it\n',
    baseVersion: 1,
    ...keyArg(guestKey),
  });
  expect(written).toMatchObject({
    version: 2,
    updatedBy: joined.participantId,
    lockedBy: joined.participantId,
  });
  await callOk(participant, 'heartbeat_artifact_lock', {
    spaceId,
    artifactId: artifact.id,
    ...keyArg(guestKey),
  });
  const unlocked = await callOk(participant, 'unlock_artifact', {
    spaceId,
    artifactId: artifact.id,
    ...keyArg(guestKey),
  });
  expect(unlocked.lockedBy).toBeUndefined();

  // History.
  const versions = await callOk(owner, 'list_artifact_versions', {
    spaceId,
    artifactId: artifact.id,
    ...keyArg(ownerKey),
  });
  expect(versions.versions.map((v: { version: number }) => v.version)).toEqual([2, 1]);
  const v1 = await callOk(owner, 'get_artifact_version', {
    spaceId,
    artifactId: artifact.id,
    version: 1,
    ...keyArg(ownerKey),
  });
  expect(v1.content).toBe('# Plan\n');
  const diff = await callOk(owner, 'diff_artifact_versions', {
    spaceId,
    artifactId: artifact.id,
    from: 1,
    to: 2,
    ...keyArg(ownerKey),
  });
  expect(diff.diff).toContain('+1. Ship it');
  const file = await callOk(participant, 'download_artifact', {
    spaceId,
    artifactId: artifact.id,
    ...keyArg(guestKey),
  });
  expect(file).toEqual({
    filename: 'Plan.md',
    mediaType: 'text/markdown',
    version: 2,
    content: '# Plan\n\n1. Ship it\n',
  });
  const artifactArgs = { spaceId, artifactId: artifact.id, ...keyArg(ownerKey) };
  await callError(owner, 'restore_artifact_version', { ...artifactArgs, version: 1 }, 423);
  await callOk(owner, 'lock_artifact', artifactArgs);
  const restored = await callOk(owner, 'restore_artifact_version', { ...artifactArgs, version: 1 });
  expect(restored).toMatchObject({ version: 3, content: '# Plan\n', updatedBy: ownerId });
  await callOk(owner, 'unlock_artifact', artifactArgs);

  // REST sees what the tools did.
  const rest = await h.get(`/hub/space/${spaceId}/artifact/${artifact.id}`, { key: ownerKey });
  expectOk(rest);
  expect(rest.body).toMatchObject({ content: '# Plan\n', version: 3 });
  const all = await callOk(participant, 'list_artifacts', { spaceId, ...keyArg(guestKey) });
  expect(all.artifacts).toEqual([rest.body]);

  // Moderation, leaving and closing.
  await callOk(owner, 'mute_participant', {
    spaceId,
    participantId: joined.participantId,
    ...keyArg(ownerKey),
  });
  await callError(
    participant,
    'lock_artifact',
    { spaceId, artifactId: artifact.id, ...keyArg(guestKey) },
    403,
  );
  await callError(participant, 'send_message', { spaceId, content: 'muted?', ...keyArg(guestKey) }, 403);
  await callOk(participant, 'list_messages', { spaceId, ...keyArg(guestKey) });
  await callOk(owner, 'unmute_participant', {
    spaceId,
    participantId: joined.participantId,
    ...keyArg(ownerKey),
  });
  await callError(owner, 'kick_participant', { spaceId, participantId: ownerId, ...keyArg(ownerKey) }, 409);
  await callOk(owner, 'update_space', { spaceId, agenda: '1. Plan', ...keyArg(ownerKey) });
  await callOk(participant, 'leave_space', { spaceId, ...keyArg(guestKey) });
  await callError(participant, 'list_artifacts', { spaceId, ...keyArg(guestKey) }, 401);
  await callOk(owner, 'close_space', { spaceId, ...keyArg(ownerKey) });
  const closed = await callError(owner, 'close_space', { spaceId, ...keyArg(ownerKey) }, 409);
  expect(closed.error).toBe('space is closed');

  for (const client of new Set([anon, owner, guest, participant])) await client.close();
}

describe('the whole story through tools', () => {
  it('works with the key as the privateKey argument', async () => {
    const shared = await connectMcp(srv.url);
    await storyThroughTools(
      async () => shared,
      (key) => ({ privateKey: key }),
    );
  });

  it('works with the key as the X-Private-Key connection header', async () => {
    await storyThroughTools(
      (key) => connectMcp(srv.url, key ? { 'X-Private-Key': key } : {}),
      () => ({}),
    );
  });
});

describe('MCP server', () => {
  it('announces itself with instructions explaining the key model', async () => {
    expect(mcp.getServerVersion()?.name).toBe('convene');
    const instructions = mcp.getInstructions() ?? '';
    expect(instructions).toMatch(/owner key/i);
    expect(instructions).toMatch(/participant key/i);
    expect(instructions).toMatch(/invitation key/i);
    // What a closed space answers depends on the call: the code is what to branch on.
    expect(instructions).toMatch(/space_closed/);
    expect(instructions).toMatch(/X-Private-Key/);
    expect(instructions).toMatch(/data, not instructions/);
  });

  it('tells a connection whose X-Private-Key names a space which space that is, and whose key', async () => {
    const created = await callOk(mcp, 'create_space', { name: 'Header room', description: 'd' });
    const { spaceId, ownerPrivateKey } = created as { spaceId: string; ownerPrivateKey: string };
    const invitation = (await callOk(mcp, 'create_invitation', { spaceId, privateKey: ownerPrivateKey })) as {
      publicInvitationKey: string;
    };
    const joined = (await callOk(mcp, 'join_space', {
      spaceId,
      privateKey: invitation.publicInvitationKey,
      name: 'Hedda',
    })) as { participantPrivateKey: string };
    const told = async (key: string) => {
      const client = await connectMcp(srv.url, { 'X-Private-Key': key });
      try {
        return (client.getInstructions() ?? '').split('\n\n').at(-1);
      } finally {
        await client.close();
      }
    };
    expect(await told(ownerPrivateKey)).toBe(
      `This connection. Its X-Private-Key header is the owner key of the space whose spaceId is "${spaceId}": pass that spaceId to the tools.`,
    );
    const participant = await told(joined.participantPrivateKey);
    expect(participant).toContain(`is the participant key of the space whose spaceId is "${spaceId}"`);
    // Not the name, which its owner chose: the instructions are read as the host's words.
    expect(participant).not.toContain('Header room');
    expect(await told(invitation.publicInvitationKey)).toContain('is an invitation key of the space');
    // A key of nobody, and no header: nothing added.
    expect(await told('f'.repeat(64))).toMatch(/^Safety\./);
    expect((mcp.getInstructions() ?? '').split('\n\n').at(-1)).toMatch(/^Safety\./);
    await callOk(mcp, 'close_space', { spaceId, privateKey: ownerPrivateKey });
    expect(await told(ownerPrivateKey)).toMatch(/^Safety\./);
  });

  it('lists tools with input and output schemas and annotations', async () => {
    const { tools } = await mcp.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    const create = byName.get('create_space');
    expect(create?.inputSchema).toMatchObject({
      type: 'object',
      required: ['name', 'description'],
      properties: { name: { type: 'string', maxLength: 200 }, privacy: { enum: ['public', 'private'] } },
    });
    expect(create?.outputSchema).toMatchObject({
      type: 'object',
      properties: { ownerPrivateKey: { type: 'string' } },
    });
    expect(create?.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: false });
    expect(byName.get('close_space')?.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
    });
    expect(byName.get('write_artifact')?.annotations).toMatchObject({
      destructiveHint: true,
      idempotentHint: false,
    });
    expect(byName.get('lock_artifact')?.annotations).toMatchObject({
      destructiveHint: false,
      idempotentHint: true,
    });
    for (const name of [
      'list_messages',
      'wait_for_messages',
      'get_artifact',
      'download_artifact',
      'list_artifact_versions',
    ])
      expect(byName.get(name)?.annotations?.readOnlyHint, name).toBe(true);
    expect(byName.get('send_message')?.inputSchema).toMatchObject({
      required: ['spaceId', 'content'],
      properties: { type: { enum: ['text', 'image', 'html'] }, privateKey: { type: 'string' } },
    });
    expect(byName.get('wait_for_messages')?.inputSchema.properties).toMatchObject({
      timeoutSeconds: { maximum: 55, default: 25 },
      timestamp: { format: 'date-time' },
    });
    expect(byName.get('write_artifact')?.outputSchema?.properties).toHaveProperty('lockExpiresAt');

    const get = byName.get('get_space');
    expect(get?.annotations?.readOnlyHint).toBe(true);
    expect(get?.inputSchema.required).toEqual(['spaceId']);
    expect(get?.inputSchema.properties).toHaveProperty('privateKey');
    // Output schemas are objects at the root (a named contract schema is inlined).
    expect(get?.outputSchema).toMatchObject({
      type: 'object',
      properties: { participants: { type: 'array' } },
    });
    expect([...byName.keys()].sort()).toEqual(
      [
        'create_space',
        'get_space',
        'update_space',
        'close_space',
        'create_invitation',
        'join_space',
        'get_join_status',
        'approve_participant',
        'kick_participant',
        'mute_participant',
        'unmute_participant',
        'leave_space',
        'send_message',
        'list_messages',
        'wait_for_messages',
        'get_inbox',
        'ack_inbox',
        'create_webhook',
        'list_webhooks',
        'delete_webhook',
        'create_artifact',
        'download_artifact',
        'list_artifacts',
        'get_artifact',
        'write_artifact',
        'lock_artifact',
        'heartbeat_artifact_lock',
        'unlock_artifact',
        'list_artifact_versions',
        'get_artifact_version',
        'diff_artifact_versions',
        'restore_artifact_version',
      ].sort(),
    );
    for (const tool of tools) {
      expect(tool.name).toMatch(/^[a-z]+(_[a-z]+)*$/);
      expect(tool.description?.length).toBeGreaterThan(20);
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
      // Open, as /openapi.json's answers are: clients ignore the fields a later server adds.
      expect(JSON.stringify(tool.outputSchema), tool.name).not.toContain('"additionalProperties":false');
      expect(typeof tool.annotations?.readOnlyHint).toBe('boolean');
    }
  });

  it('gives every tool the hints of what it does: a repeat that answers 409, 401 or 404 is not idempotent, a poll that hands out a key once is not read-only', async () => {
    const read = { readOnlyHint: true };
    /** [destructive, idempotent] of every tool that changes something. */
    const change = (destructiveHint: boolean, idempotentHint: boolean) => ({
      readOnlyHint: false,
      destructiveHint,
      idempotentHint,
    });
    const expected: Record<string, object> = {
      create_space: change(false, false),
      get_space: read,
      update_space: change(true, true),
      // A repeat answers 409 (space is closed).
      close_space: change(true, false),
      create_invitation: change(false, false),
      join_space: change(false, false),
      // The approved poll hands the key out once; a host retrying a 'read' would lose it.
      get_join_status: change(false, false),
      // A repeat answers 409: the participant is no longer waiting, muted, or live.
      approve_participant: change(false, false),
      mute_participant: change(false, false),
      unmute_participant: change(false, false),
      // Kills the participant's key for good.
      kick_participant: change(true, false),
      // The key dies: a repeat answers 401.
      leave_space: change(true, false),
      send_message: change(false, false),
      list_messages: read,
      wait_for_messages: read,
      get_inbox: read,
      ack_inbox: change(false, true),
      create_webhook: change(false, false),
      list_webhooks: read,
      // A repeat answers 404.
      delete_webhook: change(true, false),
      create_artifact: change(false, false),
      list_artifacts: read,
      get_artifact: read,
      download_artifact: read,
      lock_artifact: change(false, true),
      heartbeat_artifact_lock: change(false, true),
      unlock_artifact: change(false, true),
      write_artifact: change(true, false),
      restore_artifact_version: change(true, false),
      list_artifact_versions: read,
      get_artifact_version: read,
      diff_artifact_versions: read,
    };
    const { tools } = await mcp.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(Object.keys(expected).sort());
    for (const tool of tools) {
      expect(tool.annotations, tool.name).toMatchObject(expected[tool.name] ?? {});
      expect(tool.annotations?.openWorldHint, tool.name).toBe(tool.name === 'create_webhook');
    }
  });

  it('describes every input property of every tool (from the contract, so REST and the SDK say it too)', async () => {
    const { tools } = await mcp.listTools();
    const undescribed = tools.flatMap((tool) =>
      Object.entries(tool.inputSchema.properties ?? {})
        .filter(([, schema]) => !(schema as { description?: string }).description?.trim())
        .map(([name]) => `${tool.name}.${name}`),
    );
    expect(undescribed).toEqual([]);
    const create = tools.find((t) => t.name === 'create_space')?.inputSchema.properties as Record<
      string,
      { description: string }
    >;
    expect(create.ttl?.description).toMatch(/in seconds, 1 to 2592000/);
  });

  it('takes ids in either case, in its input schemas as the server does', async () => {
    const space = await h.createSpace();
    const first = await callOk(mcp, 'send_message', {
      spaceId: space.spaceId,
      content: 'hi',
      privateKey: space.ownerKey,
    });
    const upper = first.messageId.toUpperCase();
    const { tools } = await mcp.listTools();
    const send = tools.find((t) => t.name === 'send_message')!.inputSchema.properties as Record<string, any>;
    // A host that validates arguments against the schema (it has no regex flags) must let them through.
    expect(new RegExp(send.replyTo.pattern).test(upper)).toBe(true);
    expect(new RegExp(send.mentions.items.pattern).test(upper)).toBe(true);
    expect(new RegExp(send.replyTo.pattern).test('not-a-uuid')).toBe(false);
    // A date-time is said by its format alone: zod's 288-character regex was read with every listing.
    const list = tools.find((t) => t.name === 'list_messages')!.inputSchema.properties as Record<string, any>;
    expect(list.timestamp).toMatchObject({ type: 'string', format: 'date-time' });
    expect(list.timestamp.pattern).toBeUndefined();
    const reply = await callOk(mcp, 'send_message', {
      spaceId: space.spaceId,
      content: 'answer',
      replyTo: upper,
      privateKey: space.ownerKey,
    });
    expect(reply.messageId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('names other tools as tools (create_space, not createSpace) in every description an agent reads', async () => {
    const { tools } = await mcp.listTools();
    const names = new Set(tools.map((t) => t.name));
    const camel = new Set(
      [...names].map((n) => n.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())),
    );
    const texts: string[] = [];
    const collect = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(collect);
      else if (node && typeof node === 'object') {
        const { description } = node as { description?: unknown };
        if (typeof description === 'string') texts.push(description);
        Object.values(node).forEach(collect);
      }
    };
    collect(tools);
    const operationIds = texts.flatMap((text) =>
      [...text.matchAll(/\b[a-z]+(?:[A-Z][a-z]*)+\b/g)].map((m) => m[0]).filter((word) => camel.has(word)),
    );
    expect(operationIds).toEqual([]);
    // What they said before, now as tools: the contract's words for the OpenAPI document stay.
    const join = tools.find((t) => t.name === 'get_join_status')!;
    expect(JSON.stringify(join)).toContain('join_space');
    const document = await h.get('/openapi.json');
    expect(JSON.stringify(document.body)).toContain('createSpace’s spaceId');
  });

  it('publishes each schema once: a definition is kept only where a schema refers to it', async () => {
    const { tools } = await mcp.listTools();
    const unreferred: string[] = [];
    for (const tool of tools)
      for (const [which, schema] of [
        ['input', tool.inputSchema],
        ['output', tool.outputSchema],
      ] as const) {
        const { definitions = {} } = (schema ?? {}) as { definitions?: Record<string, unknown> };
        const text = JSON.stringify(schema);
        for (const name of Object.keys(definitions))
          if (!text.includes(`"#/definitions/${name}"`)) unreferred.push(`${tool.name} ${which}: ${name}`);
      }
    expect(unreferred).toEqual([]);
    // The root is still there, inlined: send_message answers a messageId.
    const send = tools.find((t) => t.name === 'send_message')!;
    expect(send.outputSchema?.properties).toHaveProperty('messageId');
  });

  it('caps the long polls of list_messages and get_inbox at 55 s, as wait_for_messages, below the MCP client’s 60 s timeout', async () => {
    const { tools } = await mcp.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const name of ['list_messages', 'get_inbox']) {
      const tool = byName.get(name);
      expect(tool?.inputSchema.properties?.wait, name).toMatchObject({
        maximum: 55,
        description: expect.stringContaining('at most 55'),
      });
      expect(tool?.description, name).toContain('`wait` (seconds, at most 55 here)');
    }
    // wait_for_messages waits by timeoutSeconds alone: no second parameter that does nothing.
    expect(byName.get('wait_for_messages')?.inputSchema.properties).not.toHaveProperty('wait');

    const space = await h.createSpace();
    await h.post(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey, body: { content: 'there' } });
    for (const name of ['list_messages', 'get_inbox'])
      await callError(mcp, name, { spaceId: space.spaceId, wait: 56, privateKey: space.ownerKey }, 400);
    const page = await callOk(mcp, 'list_messages', {
      spaceId: space.spaceId,
      wait: 55,
      privateKey: space.ownerKey,
    });
    expect(page.messages.map((m: { content: string }) => m.content)).toEqual(['there']);
    // REST keeps its own limit (a message is there, so it answers at once).
    expectOk(await h.get(`/hub/space/${space.spaceId}/messages?wait=60`, { key: space.ownerKey }));
  });

  it('creates a space through a tool; REST sees the same space', async () => {
    const created = await callOk(mcp, 'create_space', {
      name: 'MCP space',
      description: 'Made by a tool',
      privacy: 'private',
    });
    expect(created.ownerPrivateKey).toMatch(/^[0-9a-f]{64}$/);
    const view = await h.get(`/hub/space/${created.spaceId}`, { key: created.ownerPrivateKey });
    expectOk(view);
    expect(view.body).toMatchObject({ name: 'MCP space', privacy: 'private', state: 'open' });

    const viaTool = await callOk(mcp, 'get_space', {
      spaceId: created.spaceId,
      privateKey: created.ownerPrivateKey,
    });
    expect(viaTool).toEqual({ ...view.body, ttlRemaining: viaTool.ttlRemaining });
  });

  it('answers a tool error with isError and the REST status, message and code', async () => {
    const space = await h.createSpace();
    const rest = await h.get(`/hub/space/${space.spaceId}`, { key: 'f'.repeat(64) });
    expectError(rest, 401, 'key_unknown');
    const body = await callError(
      mcp,
      'get_space',
      { spaceId: space.spaceId, privateKey: 'f'.repeat(64) },
      401,
    );
    expect(body.error).toBe(rest.body.error);
    expect(body.code).toBe('key_unknown');

    // A key copied with spaces or a line break around it is the key (a key holds none).
    const padded = await callOk(mcp, 'get_space', {
      spaceId: space.spaceId,
      privateKey: `  ${space.ownerKey}\n`,
    });
    expect(padded.spaceId).toBe(space.spaceId);
    // A key that is only spaces is no key.
    expect((await callError(mcp, 'get_space', { spaceId: space.spaceId, privateKey: ' \n' }, 401)).code).toBe(
      'key_required',
    );

    // Missing: REST's words, and where an agent passes it (the argument), as a hint.
    const missing = await callError(mcp, 'get_space', { spaceId: space.spaceId }, 401);
    const restMissing = await h.get(`/hub/space/${space.spaceId}`);
    expect(restMissing.body.error).toBe('X-Private-Key is required');
    expect(missing.error).toBe(restMissing.body.error);
    expect(missing.code).toBe('key_required');
    expect(missing.hint).toBe('pass the space key as the privateKey argument (or the X-Private-Key header)');
    expect(restMissing.body).not.toHaveProperty('hint');
    // Said before the arguments are read, as REST says it before the body: a call with none of
    // the credentials it takes is 401 whatever else is wrong with it.
    for (const [tool, args, method, path, body] of [
      ['get_space', { spaceId: 'abc' }, 'GET', '/hub/space/abc', undefined],
      [
        'send_message',
        { spaceId: space.spaceId, content: '' },
        'POST',
        `/hub/space/${space.spaceId}/messages`,
        { content: '' },
      ],
      ['send_message', { spaceId: 'abc' }, 'POST', '/hub/space/abc/messages', {}],
      ['join_space', { spaceId: space.spaceId }, 'POST', `/hub/space/${space.spaceId}/join`, {}],
      [
        'update_space',
        { spaceId: space.spaceId, name: '' },
        'PUT',
        `/hub/space/${space.spaceId}`,
        { name: '' },
      ],
    ] as const) {
      const rest = await h.request(method, path, body === undefined ? {} : { body });
      expectError(rest, 401);
      const called = await callError(mcp, tool, args, 401);
      expect(called.error, tool).toBe(rest.body.error);
    }

    const restNotFound = await h.get('/hub/space/not-a-uuid', { key: space.ownerKey });
    const notFound = await callError(
      mcp,
      'get_space',
      { spaceId: 'not-a-uuid', privateKey: space.ownerKey },
      404,
    );
    expect(notFound.error).toBe(restNotFound.body.error);
    expect(notFound.code).toBe('not_found');
  });

  it("keeps an error's own details beside its HTTP status: a moderation's participantStatus", async () => {
    const space = await h.createSpace({ privacy: 'private' });
    const joined = await h.joinActive(space);
    const args = { spaceId: space.spaceId, participantId: joined.participantId, privateKey: space.ownerKey };
    const body = await callError(mcp, 'approve_participant', args, 409);
    expect(body).toMatchObject({
      status: 409,
      code: 'participant_status_conflict',
      participantStatus: 'active',
    });
    const rest = await h.post(`/hub/space/${space.spaceId}/participants/${joined.participantId}/approve`, {
      key: space.ownerKey,
    });
    expect(rest.body).toEqual({
      error: 'cannot approve a participant who is already active',
      code: 'participant_status_conflict',
      participantStatus: 'active',
    });
  });

  it('answers invalid arguments with 400 and the validation message', async () => {
    const body = await callError(mcp, 'create_space', { name: '', description: 'x' }, 400);
    expect(body.error).toMatch(/^invalid request: name/);
    await callError(mcp, 'create_space', { name: 'n', description: 'd', ttl: 0 }, 400);
    // A key argument of another type is a malformed argument, named, not a missing key (401).
    const space = await h.createSpace();
    for (const privateKey of [{ a: 1 }, 42, [space.ownerKey]]) {
      const wrong = await callError(
        mcp,
        'send_message',
        { spaceId: space.spaceId, privateKey, content: 'x' },
        400,
      );
      expect(wrong.issues).toEqual([
        { path: ['privateKey'], message: 'privateKey must be a string: the space key' },
      ]);
    }
  });

  it('answers U+0000 in a tool argument as the tool’s 400 with REST’s message, and the other calls of its batch still run', async () => {
    const space = await h.createSpace();
    const rest = await h.post(`/hub/space/${space.spaceId}/messages`, {
      key: space.ownerKey,
      body: { content: 'hi\u0000' },
    });
    expectError(rest, 400);
    const body = await callError(
      mcp,
      'send_message',
      { spaceId: space.spaceId, privateKey: space.ownerKey, content: 'hi\u0000' },
      400,
    );
    expect(body.error).toBe(rest.body.error);
    // In a member name too, and nothing was written.
    await callError(mcp, 'create_space', { name: 'n', description: 'd', 'x\u0000': 1 }, 400);
    /** A raw POST of tools/call messages (id, name, arguments) to /mcp. */
    const callsOf = (...calls: [number, string, Record<string, unknown>][]) =>
      h.post('/mcp', {
        headers: { Accept: 'application/json, text/event-stream' },
        key: space.ownerKey,
        body: calls.map(([id, name, args]) => ({
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name, arguments: args },
        })),
      });
    const batch = await callsOf(
      [1, 'send_message', { spaceId: space.spaceId, content: 'a\u0000' }],
      [2, 'send_message', { spaceId: space.spaceId, content: 'fine' }],
    );
    expectOk(batch);
    const byId = new Map((batch.body as { id: number; result: any }[]).map((m) => [m.id, m.result]));
    expect(byId.get(1).isError).toBe(true);
    expect(byId.get(1).content[0].text).toBe(`400: ${rest.body.error} {"code":"invalid_request"}`);
    expect(byId.get(2).isError).toBeFalsy();
    const messages = await h.get(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey });
    expect(messages.body.messages.map((m: { content: string }) => m.content)).toEqual(['fine']);
    // Outside a tool's arguments it is still the HTTP 400 every body gets, as is nesting past 64 levels anywhere.
    expectError(await callsOf([1, 'get\u0000space', { spaceId: space.spaceId }]), 400);
    let deep: unknown = 1;
    for (let i = 0; i < 70; i++) deep = { a: deep };
    expectError(await callsOf([1, 'get_space', { spaceId: space.spaceId, deep }]), 400);
  });

  it('answers a version no artifact can have (beyond 2^31) with 404, as REST does, not 500', async () => {
    const space = await h.createSpace();
    const created = await h.post(`/hub/space/${space.spaceId}/artifact`, {
      key: space.ownerKey,
      body: { name: 'doc', type: 'markdown', content: 'x' },
    });
    const args = { spaceId: space.spaceId, artifactId: created.body.id, privateKey: space.ownerKey };
    await callOk(mcp, 'lock_artifact', args);
    for (const version of [2 ** 31, 2 ** 53 - 1]) {
      const rest = await h.get(
        `/hub/space/${space.spaceId}/artifact/${created.body.id}/versions/${version}`,
        {
          key: space.ownerKey,
        },
      );
      expectError(rest, 404);
      await callError(mcp, 'get_artifact_version', { ...args, version }, 404);
      await callError(mcp, 'restore_artifact_version', { ...args, version }, 404);
      await callError(mcp, 'diff_artifact_versions', { ...args, from: 1, to: version }, 404);
      await callError(mcp, 'diff_artifact_versions', { ...args, from: version, to: 1 }, 404);
    }
  });

  it('gives download_artifact a file name of one path segment, whatever the artifact is named', async () => {
    const space = await h.createSpace();
    for (const [name, filename] of [
      ['../../.ssh/authorized_keys', '.._.._.ssh_authorized_keys.md'],
      ['C:\\Windows\\x', 'C:_Windows_x.md'],
      ['invoice\u202Egnp', 'invoice_gnp.md'],
      ['Plan é', 'Plan é.md'],
    ]) {
      const created = await h.post(`/hub/space/${space.spaceId}/artifact`, {
        key: space.ownerKey,
        body: { name, type: 'markdown', content: 'x' },
      });
      expectOk(created);
      const args = { spaceId: space.spaceId, artifactId: created.body.id, privateKey: space.ownerKey };
      expect((await callOk(mcp, 'download_artifact', args)).filename, name).toBe(filename);
    }
  });

  it('polls a join without pollToken as REST does without X-Poll-Token: pending while it waits, 401 once decided, the key only with it', async () => {
    const space = await h.createSpace({ privacy: 'private' });
    const pending = await h.joinPending(space, { name: 'Joiner' });
    const args = {
      spaceId: space.spaceId,
      participantId: pending.participantId,
      privateKey: pending.invitationKey,
    };
    const rest = () =>
      h.get(`/hub/space/${space.spaceId}/join/${pending.participantId}`, { key: pending.invitationKey });
    expectOk(await rest(), 202);
    expect(await callOk(mcp, 'get_join_status', args)).toEqual({ status: 'pending' });
    expectOk(
      await h.post(`/hub/space/${space.spaceId}/participants/${pending.participantId}/approve`, {
        key: space.ownerKey,
      }),
    );
    const refused = await rest();
    expectError(refused, 401);
    expect(refused.body.code).toBe('poll_token_required');
    const mcpRefused = await callError(mcp, 'get_join_status', args, 401);
    expect(mcpRefused).toMatchObject({ error: refused.body.error, code: 'poll_token_required' });
    expect(mcpRefused.error).toContain('pollToken argument');
    const approved = await callOk(mcp, 'get_join_status', { ...args, pollToken: pending.pollToken });
    expect(approved.participantPrivateKey).toMatch(/^[0-9a-f]{64}$/);
  });

  it('says where approving is described that kicking a waiting joiner refuses it, which it does', async () => {
    expect(mcp.getInstructions()).toContain(
      'The owner admits a waiting joiner with approve_participant, or refuses it with kick_participant',
    );
    const { tools } = await mcp.listTools();
    const description = (name: string) => tools.find((tool) => tool.name === name)?.description;
    expect(description('kick_participant')).toContain(
      'Kicking a participant waiting for approval refuses its join',
    );
    expect(description('approve_participant')).toContain('To refuse it instead, kick_participant');
    const space = await h.createSpace({ privacy: 'private' });
    const pending = await h.joinPending(space);
    await callOk(mcp, 'kick_participant', {
      spaceId: space.spaceId,
      participantId: pending.participantId,
      privateKey: space.ownerKey,
    });
    const refused = await callError(
      mcp,
      'get_join_status',
      {
        spaceId: space.spaceId,
        participantId: pending.participantId,
        pollToken: pending.pollToken,
        privateKey: pending.invitationKey,
      },
      404,
    );
    expect(refused.error).toMatch(/join request refused/);
  });

  it('takes the key from the X-Private-Key connection header', async () => {
    const space = await h.createSpace({ name: 'Header space' });
    const withHeader = await connectMcp(srv.url, { 'X-Private-Key': space.ownerKey });
    try {
      const view = await callOk(withHeader, 'get_space', { spaceId: space.spaceId });
      expect(view.name).toBe('Header space');
      // The argument wins over the header.
      await callError(withHeader, 'get_space', { spaceId: space.spaceId, privateKey: 'f'.repeat(64) }, 401);
    } finally {
      await withHeader.close();
    }
  });

  it('answers malformed params of a known method with -32602 (invalid params), never -32603', async () => {
    const cases: [string, unknown][] = [
      ['tools/call', { name: 42 }],
      ['tools/call', { name: 'get_space', arguments: 'x' }],
      ['tools/call', {}],
      ['resources/read', {}],
      ['resources/read', { uri: 5 }],
      ['resources/subscribe', { uri: ['a'] }],
      ['initialize', {}],
      ['initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: 'me' }],
    ];
    for (const [method, params] of cases) {
      const res = await h.post('/mcp', {
        headers: { Accept: 'application/json, text/event-stream' },
        body: { jsonrpc: '2.0', id: 9, method, params },
      });
      expectOk(res);
      expect(res.body.error?.code, `${method} ${JSON.stringify(params)}: ${JSON.stringify(res.body)}`).toBe(
        -32602,
      );
      expect(res.body.error.message).toMatch(/^invalid params: /);
      expect(res.body.id).toBe(9);
    }
    const unknown = await h.post('/mcp', {
      headers: { Accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 10, method: 'tools/frobnicate', params: {} },
    });
    expect(unknown.body.error?.code).toBe(-32601);
  });

  it('puts the plain message in a JSON-RPC error, so a client says its "MCP error <code>:" once', async () => {
    const res = await h.post('/mcp', {
      headers: { Accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 11, method: 'tools/call', params: { name: 'no_such_tool' } },
    });
    expect(res.body.error).toEqual({ code: -32602, message: 'unknown tool no_such_tool' });
    await expect(mcp.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(
      /^MCP error -32602: unknown tool no_such_tool$/,
    );
  });

  it('needs a session for GET and DELETE (JSON 400/404); a bare request without initialize works', async () => {
    expectError(await h.get('/mcp', { headers: { Accept: 'text/event-stream' } }), 400);
    expectError(await h.delete('/mcp'), 400);
    expectError(
      await h.get('/mcp', { headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': 'nope' } }),
      404,
    );
    expectError(await h.delete('/mcp', { headers: { 'Mcp-Session-Id': 'nope' } }), 404);
    const res = await h.post('/mcp', {
      headers: { Accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
    });
    expectOk(res);
    expect(res.body.result.tools.length).toBeGreaterThan(1);
  });
});

describe('arguments a tool does not take', () => {
  it('refuses one named like an argument it takes, naming that one; ignores one named like none', async () => {
    const space = await h.createSpace();
    const base = { spaceId: space.spaceId, privateKey: space.ownerKey, content: 'hello' };
    const slip = await callError(mcp, 'send_message', { ...base, mention: [space.ownerId] }, 400);
    expect(slip.error).toBe('unknown argument "mention": did you mean "mentions"?');
    expect(slip.issues).toEqual([{ path: ['mention'], message: slip.error }]);
    const { spaceId: _id, ...withoutId } = base;
    const cased = await callError(mcp, 'send_message', { ...withoutId, spaceID: space.spaceId }, 400);
    expect(cased.error).toBe('unknown argument "spaceID": did you mean "spaceId"?');
    // Nothing was sent for either.
    const before = await h.get(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey });
    expect(before.body.messages).toEqual([]);
    // A name far from every argument (a host's or a model's own) is ignored, as REST ignores it;
    // so is a key given to a tool that takes none.
    await callOk(mcp, 'send_message', { ...base, reasoning: 'to say hello' });
    await callOk(mcp, 'create_space', { name: 'X', description: 'y', privateKey: space.ownerKey });
    // Given both, the slip is not taken for the other: `mentions` is there.
    await callOk(mcp, 'send_message', { ...base, mentions: [space.ownerId], mentionz: 1 });
  });

  it('refuses the start of an argument’s name, and another tool’s name for a wait’s length, naming its own', async () => {
    const space = await h.createSpace();
    const base = { spaceId: space.spaceId, privateKey: space.ownerKey };
    // Each would have waited the default 25 s, not the 2 asked for.
    for (const [tool, given, meant] of [
      ['wait_for_messages', 'timeout', 'timeoutSeconds'],
      ['wait_for_messages', 'wait', 'timeoutSeconds'],
      ['list_messages', 'timeoutSeconds', 'wait'],
      ['send_message', 'reply', 'replyTo'],
      // Each would have read from the first message again.
      ['list_messages', 'cursor', 'timestamp'],
      ['wait_for_messages', 'cursor', 'timestamp'],
      ['list_messages', 'since', 'timestamp'],
    ] as const) {
      const refused = await callError(mcp, tool, { ...base, content: 'x', [given]: 2 }, 400);
      expect(refused.error, tool).toBe(`unknown argument "${given}": did you mean "${meant}"?`);
    }
    // Short names are nobody's start: `to` is ignored.
    await callOk(mcp, 'send_message', { ...base, content: 'hello', to: 'all' });
  });

  it('refuses what update_space cannot change (privacy, ttl), saying why, and changes nothing given with it', async () => {
    const space = await h.createSpace();
    const base = { spaceId: space.spaceId, privateKey: space.ownerKey, agenda: 'new agenda' };
    const privacy = await callError(mcp, 'update_space', { ...base, privacy: 'private' }, 400);
    expect(privacy.error).toMatch(
      /^privacy cannot be changed: a space stays public or private as it was created/,
    );
    expect(privacy.issues).toEqual([{ path: ['privacy'], message: privacy.error }]);
    const ttl = await callError(mcp, 'update_space', { ...base, ttl: 3600 }, 400);
    expect(ttl.error).toMatch(/^ttl cannot be changed/);
    const read = await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
    expect({ privacy: read.body.privacy, agenda: read.body.agenda }).toEqual({
      privacy: 'public',
      agenda: '',
    });
  });

  it('refuses a key under another name, naming privateKey, where it would have been missing', async () => {
    const space = await h.createSpace();
    const { publicInvitationKey } = (
      await h.post(`/hub/space/${space.spaceId}/invite`, { key: space.ownerKey })
    ).body;
    for (const [tool, args] of [
      ['send_message', { spaceId: space.spaceId, content: 'x', private_key: space.ownerKey }],
      ['send_message', { spaceId: space.spaceId, content: 'x', ownerPrivateKey: space.ownerKey }],
      ['get_space', { spaceId: space.spaceId, key: space.ownerKey }],
      ['join_space', { spaceId: space.spaceId, name: 'Ada', publicInvitationKey }],
    ] as const) {
      const given = Object.keys(args).at(-1)!;
      const refused = await callError(mcp, tool, args, 400);
      expect(refused.error, tool).toBe(`unknown argument "${given}": did you mean "privateKey"?`);
    }
    // Nothing was sent, nobody joined.
    const space_ = await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
    expect(space_.body.participants).toHaveLength(1);
    const messages = await h.get(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey });
    expect(messages.body.messages).toEqual([]);
    // Without any key and no slip, the missing key is said as before.
    const missing = await callError(mcp, 'get_space', { spaceId: space.spaceId }, 401);
    expect(missing.error).toMatch(/X-Private-Key/);
  });
});

describe('idempotencyKey', () => {
  it('is an argument of the writes REST replays, and of no read or credential-minting call', async () => {
    const { tools } = await mcp.listTools();
    const takes = (name: string) => {
      const tool = tools.find((t) => t.name === name);
      expect(tool, name).toBeDefined();
      return 'idempotencyKey' in ((tool!.inputSchema.properties ?? {}) as object);
    };
    for (const name of [
      'send_message',
      'join_space',
      'write_artifact',
      'create_artifact',
      'kick_participant',
    ])
      expect({ name, takes: takes(name) }).toEqual({ name, takes: true });
    for (const name of ['create_space', 'list_messages', 'get_space'])
      expect({ name, takes: takes(name) }).toEqual({ name, takes: false });
    const send = tools.find((t) => t.name === 'send_message')!;
    expect((send.inputSchema.properties as Record<string, any>).idempotencyKey).toMatchObject({
      type: 'string',
      maxLength: 255,
    });
  });

  it('makes a retried call return the first answer instead of writing twice', async () => {
    const space = await h.createSpace();
    const idempotencyKey = crypto.randomUUID();
    const args = {
      spaceId: space.spaceId,
      privateKey: space.ownerKey,
      content: 'exactly once',
      idempotencyKey,
    };
    const first = (await mcp.callTool({ name: 'send_message', arguments: args })) as any;
    expect(first.isError).toBeFalsy();
    expect(first._meta?.['convene/idempotentReplay']).toBeUndefined();
    const again = (await mcp.callTool({ name: 'send_message', arguments: args })) as any;
    expect(again.isError).toBeFalsy();
    expect(again._meta).toEqual({ 'convene/idempotentReplay': true });
    expect(again.structuredContent.messageId).toBe(first.structuredContent.messageId);
    expect(JSON.parse(again.content[0].text)).toEqual(again.structuredContent);
    // Other arguments under the same key: 422, and nothing sent.
    const other = await callError(mcp, 'send_message', { ...args, content: 'something else' }, 422);
    expect(other.error).toMatch(/Idempotency-Key/);
    // Without a key, or with a fresh one, a call runs each time.
    await callOk(mcp, 'send_message', { ...args, idempotencyKey: undefined, content: 'no key' });
    await callOk(mcp, 'send_message', { ...args, idempotencyKey: crypto.randomUUID() });
    const list = await h.get(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey });
    expect(list.body.messages.map((m: { content: string }) => m.content)).toEqual([
      'exactly once',
      'no key',
      'exactly once',
    ]);
  });

  it('replays a refusal as the tool error it was, and keeps records apart by key and by tool', async () => {
    const space = await h.createSpace();
    const artifact = { id: await h.createArtifact(space, 'Plan', 'v1') };
    const write = {
      spaceId: space.spaceId,
      artifactId: artifact.id,
      privateKey: space.ownerKey,
      content: 'v2',
      idempotencyKey: crypto.randomUUID(),
    };
    // Not locked: 423, recorded; the retry gets the same 423, marked, even once the lock is taken.
    const refused = await callError(mcp, 'write_artifact', write, 423);
    await callOk(mcp, 'lock_artifact', {
      spaceId: space.spaceId,
      artifactId: artifact.id,
      privateKey: space.ownerKey,
    });
    const replay = (await mcp.callTool({ name: 'write_artifact', arguments: write })) as any;
    expect(replay.isError).toBe(true);
    expect(replay._meta['convene/idempotentReplay']).toBe(true);
    expect(replay._meta['convene/error']).toEqual({ ...refused });
    // A fresh key writes; its retry is the same version, written once.
    const fresh = { ...write, idempotencyKey: crypto.randomUUID() };
    const written = await callOk(mcp, 'write_artifact', fresh);
    expect(written.version).toBe(2);
    expect((await callOk(mcp, 'write_artifact', fresh)).version).toBe(2);
    // The same key given to another tool is another record: it runs.
    const heartbeat = await callOk(mcp, 'heartbeat_artifact_lock', {
      spaceId: space.spaceId,
      artifactId: artifact.id,
      privateKey: space.ownerKey,
      idempotencyKey: fresh.idempotencyKey,
    });
    expect(heartbeat.lockedBy).toBe(written.lockedBy);
    const view = await h.get(`/hub/space/${space.spaceId}/artifact/${artifact.id}`, { key: space.ownerKey });
    expect(view.body.version).toBe(2);
  });

  it('replays a join to its joiner: an invitation key’s records are kept per caller, as over REST', async () => {
    const space = await h.createSpace();
    const invitationKey = await h.invite(space);
    const args = {
      spaceId: space.spaceId,
      privateKey: invitationKey,
      name: 'Retrying agent',
      idempotencyKey: crypto.randomUUID(),
    };
    const joined = await callOk(mcp, 'join_space', args);
    const again = await callOk(mcp, 'join_space', args);
    expect(again.participantId).toBe(joined.participantId);
    expect(again.participantPrivateKey).toBe(joined.participantPrivateKey);
    const view = await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
    expect(view.body.participants.filter((p: { name: string }) => p.name === 'Retrying agent')).toHaveLength(
      1,
    );
  });
});

describe('wait_for_messages', () => {
  it('answers as soon as a message arrives after the timestamp', async () => {
    const space = await h.createSpace();
    const guest = await h.joinActive(space);
    await h.post(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey, body: { content: 'old' } });
    const before = await h.get(`/hub/space/${space.spaceId}/messages`, { key: guest.key });
    const started = Date.now();
    const waiting = callOk(mcp, 'wait_for_messages', {
      spaceId: space.spaceId,
      timestamp: before.body.cursor,
      timeoutSeconds: 20,
      privateKey: guest.key,
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const sent = await h.post(`/hub/space/${space.spaceId}/messages`, {
      key: space.ownerKey,
      body: { content: 'new' },
    });
    expectOk(sent);
    const result = await waiting;
    expect(result.messages.map((m: { content: string }) => m.content)).toEqual(['new']);
    expect(result.messages[0].id).toBe(sent.body.messageId);
    // Woken by the notification: nothing polls the database while it waits, so without it the
    // call would answer empty after its 20 s (the margin is for a loaded CI machine).
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('answers at once when messages are already there, and empty when the time is up', async () => {
    const space = await h.createSpace();
    await h.post(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey, body: { content: 'there' } });
    const now = await callOk(mcp, 'wait_for_messages', {
      spaceId: space.spaceId,
      privateKey: space.ownerKey,
    });
    expect(now.messages.map((m: { content: string }) => m.content)).toEqual(['there']);

    const started = Date.now();
    const empty = await callOk(mcp, 'wait_for_messages', {
      spaceId: space.spaceId,
      timestamp: now.cursor,
      timeoutSeconds: 1,
      privateKey: space.ownerKey,
    });
    expect(empty.messages).toEqual([]);
    expect(empty.cursor).toBe(now.cursor);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('refuses a bad key and a timeout beyond 55 seconds', async () => {
    const space = await h.createSpace();
    const invitationKey = await h.invite(space);
    await callError(mcp, 'wait_for_messages', { spaceId: space.spaceId, privateKey: invitationKey }, 401);
    await callError(
      mcp,
      'wait_for_messages',
      { spaceId: space.spaceId, timeoutSeconds: 56, privateKey: space.ownerKey },
      400,
    );
  });

  it.runIf(onPostgres())('wakes for a message sent through another node', async () => {
    await withServer({ databaseUrl: srv.databaseUrl! }, async ({ h: other }) => {
      const space = await h.createSpace();
      const started = Date.now();
      const waiting = callOk(mcp, 'wait_for_messages', {
        spaceId: space.spaceId,
        timeoutSeconds: 20,
        privateKey: space.ownerKey,
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const sent = await other.post(`/hub/space/${space.spaceId}/messages`, {
        key: space.ownerKey,
        body: { content: 'from node B' },
      });
      expectOk(sent);
      const result = await waiting;
      expect(result.messages.map((m: { content: string }) => m.content)).toEqual(['from node B']);
      // Woken by the notification, well before its 20 s (nothing polls the database).
      expect(Date.now() - started).toBeLessThan(15_000);
    });
  });
});

describe('shutdown', () => {
  it('ends a pending wait_for_messages at once, so the server stops quickly', async () => {
    const node = await startTestServer();
    const client = await connectMcp(node.url);
    const space = await new Harness(node.url).createSpace();
    const waiting = client
      .callTool({
        name: 'wait_for_messages',
        arguments: { spaceId: space.spaceId, timeoutSeconds: 50, privateKey: space.ownerKey },
      })
      .then(
        (result) => result,
        (error: unknown) => error,
      );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = Date.now();
    await node.close();
    expect(Date.now() - started).toBeLessThan(5000);
    const outcome = (await waiting) as { structuredContent?: { messages: unknown[] } };
    // Either the empty answer made it out before the socket closed, or the call failed: never a hang.
    if (outcome.structuredContent) expect(outcome.structuredContent.messages).toEqual([]);
    await client.close();
  });
});
