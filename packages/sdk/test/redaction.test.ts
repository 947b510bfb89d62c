// Every SDK object that holds a credential, logged (console.log is util.inspect) or saved as JSON,
// shows who it is and never the key, token, JWT or header it holds; nor does a browser's console,
// which lists an object's own properties, whatever Node's inspect hook says.
import { randomUUID } from 'node:crypto';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { type LockedArtifact, LockedError, PendingJoin } from '../src';
import { hub, serverUrl } from './helpers';

describe('objects that hold credentials', () => {
  it('never show them to JSON.stringify or util.inspect', async () => {
    const account = { email: `sdk-${randomUUID()}@example.com`, password: 'correct horse' };
    const session = await hub().auth.signup(account);
    const userToken = (await session.tokens.create({ name: 'redaction' })).token;
    const header = `hdr-${randomUUID()}`;
    const client = hub({ userToken, headers: { 'X-Test-Secret': header } });

    const space = await client.spaces.create({ name: 'Redaction', description: 'logged and saved' });
    const owner = client.space(space.spaceId, space.ownerPrivateKey, space.ownerId);
    const invitation = await owner.invitations.create();
    const me = await client.join(invitation.agentLink, { name: 'Logged' });
    const artifact = await me.artifacts.create({ name: 'doc', content: '# Doc\n' });
    let doc: LockedArtifact | undefined;
    await me.artifacts.withLock(artifact.id, (locked) => {
      doc = locked;
    });
    const list = me.messages.list();
    await list;

    const privateSpace = await client.spaces.create({
      name: 'Private',
      description: 'approval needed',
      privacy: 'private',
    });
    const privateOwner = client.space(privateSpace.spaceId, privateSpace.ownerPrivateKey);
    const privateInvitation = await privateOwner.invitations.create();
    const pending = await client.join(privateInvitation.agentLink, { name: 'Waiting', wait: false });
    if (!(pending instanceof PendingJoin))
      throw new Error('a private space answers a join with a PendingJoin');
    const flow = await client.link.start({ agentName: 'redaction test' });

    const secrets = {
      'owner key': space.ownerPrivateKey,
      'private owner key': privateSpace.ownerPrivateKey,
      'participant key': me.key,
      'user token': userToken,
      JWT: session.token,
      header,
      'invitation key': invitation.publicInvitationKey,
      'pending invitation key': pending.invitationKey,
      'poll token': pending.pollToken ?? 'no poll token',
      'device code': flow.deviceCode,
    };
    const objects: [string, object][] = [
      ['client', client],
      ['client withOptions', client.withOptions({ maxRetries: 1 })],
      ['owner client', owner],
      ['participant client', me],
      ['messages', me.messages],
      ['inbox', me.inbox],
      ['webhooks', me.webhooks],
      ['artifacts', me.artifacts],
      ['invitations', owner.invitations],
      ['participants', owner.participants],
      ['locked artifact', doc!],
      ['message list', list],
      ['message stream', me.messages.stream()],
      ['session', session],
      ['session rebuilt from its JWT', client.session(session.token)],
      ['link flow', flow],
      ['pending join', pending],
      ['resumed pending join', client.pendingJoin(pending.toJSON())],
    ];
    for (const [name, object] of objects) {
      const listed = ownValues(object);
      for (const [what, secret] of Object.entries(secrets))
        expect(
          listed.filter((value) => value.includes(secret)),
          `a browser console lists the ${what} among the ${name}'s properties`,
        ).toEqual([]);
      const logged = inspect(object, { depth: Number.POSITIVE_INFINITY, showHidden: true });
      const saved = JSON.stringify(object) ?? '';
      for (const [what, secret] of Object.entries(secrets)) {
        expect(logged, `util.inspect of the ${name} shows the ${what}`).not.toContain(secret);
        // A pending join's JSON is what resumes it: its invitation key and pollToken, nothing more.
        if (object instanceof PendingJoin && /invitation key|poll token/.test(what)) continue;
        expect(saved, `JSON of the ${name} shows the ${what}`).not.toContain(secret);
      }
    }

    // What they do show: who they are.
    expect(JSON.parse(JSON.stringify(client))).toEqual({ baseUrl: serverUrl() });
    expect(JSON.parse(JSON.stringify(me))).toEqual({
      baseUrl: serverUrl(),
      spaceId: space.spaceId,
      participantId: me.participantId,
    });
    expect(inspect(me, { breakLength: Number.POSITIVE_INFINITY })).toBe(
      `SpaceClient { baseUrl: '${serverUrl()}', spaceId: '${space.spaceId}', participantId: '${me.participantId}' }`,
    );
    expect(inspect(pending)).toContain(pending.participantId);
  });

  it('saves an error as JSON with its message and details', async () => {
    const space = await hub().spaces.create({ name: 'Errors', description: 'saved as JSON' });
    const owner = hub().space(space.spaceId, space.ownerPrivateKey, space.ownerId);
    const doc = await owner.artifacts.create({ name: 'doc', content: 'x' });
    await owner.artifacts.lock(doc.id);
    const me = await hub().join((await owner.invitations.create()).agentLink, { name: 'Second' });
    const error = (await me.artifacts.lock(doc.id).then(
      () => undefined,
      (e: unknown) => e,
    )) as LockedError;
    expect(error).toBeInstanceOf(LockedError);
    // An Error's message is not an own enumerable field: JSON.stringify used to leave it out.
    expect(JSON.parse(JSON.stringify(error))).toEqual({
      name: 'LockedError',
      message: error.message,
      status: 423,
      body: error.body,
      code: 'lock_held',
      requestId: error.requestId,
      // The call: its URL carries the ids, never a key.
      operation: 'lockArtifact',
      method: 'POST',
      url: `${serverUrl()}/hub/space/${space.spaceId}/artifact/${doc.id}/lock`,
      // Refused before it ran: no need to look whether it took the lock.
      mayHaveRun: false,
      // The write's Idempotency-Key (no secret: it names a request, and only with its key).
      idempotencyKey: expect.stringMatching(/^[0-9a-f-]{36}$/),
      lockedBy: owner.participantId,
      lockedByName: 'Owner',
      lockExpiresAt: error.lockExpiresAt,
    });
    expect(error.message).toMatch(/^423 /);
  });
});

/**
 * Every string a browser's console can list by expanding `root`, level after level: own
 * properties, enumerable or not, symbol-keyed too, as devtools shows them. A getter (on the
 * object or its prototype) is not run: devtools show it as `(...)` until it is clicked.
 */
function ownValues(root: unknown): string[] {
  const found: string[] = [];
  const seen = new Set<unknown>();
  const visit = (value: unknown): void => {
    if (typeof value === 'string') found.push(value);
    if ((typeof value !== 'object' && typeof value !== 'function') || value === null || seen.has(value))
      return;
    seen.add(value);
    if (value instanceof Headers) for (const entry of value) found.push(entry.join(': '));
    for (const key of Reflect.ownKeys(value)) {
      const descriptor = Reflect.getOwnPropertyDescriptor(value, key)!;
      if ('value' in descriptor) visit(descriptor.value);
    }
  };
  visit(root);
  return found;
}
