// Plain JavaScript has no compiler to catch an argument left out or passed as null: the SDK must
// say what it needs, as a ConveneError, rather than fail inside itself with a TypeError.
import { describe, expect, it } from 'vitest';
import { BadRequestError, Convene, ConveneError, verifyWebhook } from '../src';
import { hub, ownedSpace, participant } from './helpers';

/** Calls `object[method](...args)` as untyped JavaScript would. */
function untyped(object: object, method: string, ...args: unknown[]): unknown {
  return Reflect.apply((object as Record<string, (...a: unknown[]) => unknown>)[method]!, object, args);
}

/** What a call ends with, thrown at once or rejected: the error, or its value. */
async function outcome(call: () => unknown): Promise<unknown> {
  try {
    const value = call();
    // An async iterable: ask for its first item.
    if (value && typeof value === 'object' && Symbol.asyncIterator in value) {
      const iterator = (value as AsyncIterable<unknown>)[Symbol.asyncIterator]();
      const first = await iterator.next();
      await iterator.return?.();
      return first;
    }
    return await value;
  } catch (error) {
    return error;
  }
}

describe('called from plain JavaScript', () => {
  it('says what is missing instead of throwing a TypeError', async () => {
    const client = hub();
    const { owner } = await ownedSpace(client);
    const invitation = await owner.invitations.create();
    const me = await participant(owner, 'Plain');
    const artifact = await me.artifacts.create({ name: 'plain', content: '# x\n' });
    // Something in the inbox, so that following it answers at once.
    await owner.messages.send({ content: 'for you', mentions: [me.participantId!] });
    const Untyped = Convene as unknown as new (...args: unknown[]) => Convene;

    const cases: [string, () => unknown, RegExp][] = [
      ['new Convene()', () => new Untyped(), /baseUrl is required/],
      ['new Convene(null)', () => new Untyped(null), /baseUrl is required/],
      // The server says which fields a join needs, as it does for every other write.
      ['hub.join(link)', () => untyped(client, 'join', invitation.agentLink), /400 .*name/],
      [
        'hub.join(spaceId, key)',
        () => untyped(client, 'join', owner.spaceId, invitation.publicInvitationKey),
        /400 .*name/,
      ],
      ['hub.join(link, null)', () => untyped(client, 'join', invitation.agentLink, null), /400 .*name/],
      ['hub.pendingJoin()', () => untyped(client, 'pendingJoin'), /spaceId, invitationKey, participantId/],
      [
        'hub.pendingJoin(a JSON string)',
        () => untyped(client, 'pendingJoin', JSON.stringify({ spaceId: owner.spaceId })),
        /spaceId, invitationKey, participantId/,
      ],
      ['send(text, null)', () => untyped(me.messages, 'send', 'hi', null), /./],
      ['messages.list(null)', () => untyped(me.messages, 'list', null), /./],
      ['messages.stream(null)', () => untyped(me.messages, 'stream', null), /./],
      ['inbox.get(null)', () => untyped(me.inbox, 'get', null), /./],
      ['inbox.follow(null)', () => untyped(me.inbox, 'follow', null), /./],
      ['artifacts.withLock(id)', () => untyped(me.artifacts, 'withLock', artifact.id), /callback/],
      [
        'artifacts.withLock(id, fn, null)',
        () => untyped(me.artifacts, 'withLock', artifact.id, () => 1, null),
        /./,
      ],
      ['link.start(params, null)', () => untyped(client.link, 'start', {}, null), /./],
      ['verifyWebhook()', () => untyped({ verifyWebhook }, 'verifyWebhook'), /body, headers, secret/],
      ['verifyWebhook({})', () => untyped({ verifyWebhook }, 'verifyWebhook', {}), /body, headers, secret/],
    ];
    const seen = [];
    for (const [name, call, message] of cases) {
      const result = await outcome(call);
      // A call that succeeds is fine (null taken for "no options"); a failure must be the SDK's.
      if (result instanceof Error)
        seen.push([name, result instanceof ConveneError && message.test(result.message), result.message]);
      else seen.push([name, message.source === '.', result === undefined ? 'undefined' : 'a value']);
    }
    expect(seen.filter(([, ok]) => !ok)).toEqual([]);
    // A join without its params is refused by the server, which names the field.
    expect(await outcome(() => untyped(client, 'join', invitation.agentLink))).toBeInstanceOf(
      BadRequestError,
    );
  });

  it('sends a type it was given, which the server refuses, rather than making a markdown document', async () => {
    const { owner } = await ownedSpace(hub());
    const refused = await outcome(() =>
      untyped(owner.artifacts, 'create', { name: 'page', type: 'html', content: '<p>x</p>' }),
    );
    expect(refused).toBeInstanceOf(BadRequestError);
    expect((refused as Error).message).toMatch(/type/);
    expect((await owner.artifacts.list()).artifacts).toEqual([]);
    // No type, or an undefined one, is markdown.
    const made = await owner.artifacts.create({ name: 'notes', type: undefined, content: '# x\n' });
    expect(made.type).toBe('markdown');
  });
});
