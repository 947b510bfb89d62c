import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { follow, joinAs, User } from './helpers/cli';
import { startServer, type TestServer } from './helpers/server';

let server: TestServer;
let owner: User;
let guest: User;

beforeAll(async () => {
  server = await startServer();
  owner = new User(server.url);
  guest = new User(server.url);
  await owner.run(['space', 'create', 'Desk', '--owner-name', 'Olga']);
  await joinAs(owner, guest, 'Gus');
});
afterAll(async () => {
  await server?.close();
  owner?.remove();
  guest?.remove();
});

describe('send --mention, --reply-to and inbox', () => {
  it('addresses messages, lists the inbox and acknowledges it', async () => {
    const first = (await owner.run(['send', 'What do you think?', '-q'])).stdout.trim();
    expect((await guest.run(['send', 'for the owner', '--mention', 'olga'])).code).toBe(0);
    expect((await guest.run(['send', 'an answer', '--reply-to', first])).code).toBe(0);
    expect((await guest.run(['send', 'not for anyone'])).code).toBe(0);
    // --reply-to takes the start of an id, as other id arguments do.
    const short = await guest.run(['send', 'a short answer', '--reply-to', first.slice(0, 8)]);
    expect(short.code).toBe(0);
    const unknown = await guest.run(['send', 'x', '--reply-to', 'ffffffff']);
    expect(unknown.code).toBe(5);
    expect(unknown.stderr).toContain('no message "ffffffff"');
    // Too short to name one: said so (a usage error), not "no message".
    const tooShort = await guest.run(['send', 'x', '--reply-to', first.slice(0, 3)]);
    expect(tooShort.code).toBe(2);
    expect(tooShort.stderr).toContain(
      `"${first.slice(0, 3)}" is too short to name a message: give its id or its first 4 characters or more`,
    );
    expect(tooShort.stderr).toContain('`convene messages -q`');
    // A name that names nobody is not found (exit 5), as for every other name; a typo gets the name.
    const nobody = await guest.run(['send', 'x', '--mention', 'Nobody']);
    expect(nobody.code).toBe(5);
    expect(nobody.stderr).toContain('nobody called "Nobody" is in this space');
    expect(nobody.stderr).toContain('See who is there with `convene participants`');
    const typo = await guest.run(['send', 'x', '--mention', 'Olgq']);
    expect(typo.code).toBe(5);
    expect(typo.stderr).toContain('Did you mean "Olga"?');

    const listed = (await owner.run(['inbox', '--json'])).json();
    expect(listed.messages.map((m: any) => m.content)).toEqual([
      'for the owner',
      'an answer',
      'a short answer',
    ]);
    expect(listed.unread).toEqual({ inbox: 3, mentions: 1, replies: 2, messages: 5 });
    const human = await owner.run(['inbox']);
    expect(human.stdout).toContain('Gus: for the owner');
    expect(human.stderr).toContain(
      '3 unread for you (1 mention, 2 replies), of 5 messages in the space since your read position',
    );

    // --ack says what it printed and acknowledged; --json is the API's answer, after the ack.
    const ackedHuman = await owner.run(['inbox', '--ack']);
    expect(ackedHuman.stdout).toContain('Gus: for the owner');
    expect(ackedHuman.stderr).toContain(
      '3 unread for you (1 mention, 2 replies), of 5 messages in the space since your read position; acknowledged',
    );
    const acked = (await owner.run(['inbox', '--ack', '--json'])).json();
    expect(acked).toMatchObject({ lastReadSeq: 5, unread: { inbox: 0 } });
    const after = await owner.run(['inbox']);
    expect(after.stderr.trim()).toBe('Nothing new for you.');
    // The space's count is of what came after the acknowledged position too, not of every message.
    expect((await guest.run(['send', 'later, for nobody'])).code).toBe(0);
    const later = await owner.run(['inbox']);
    expect(later.stderr.trim()).toBe(
      'Nothing new for you (1 message in the space since your read position).',
    );
    // A message that both mentions and replies counts in each: said, so the two do not read as a sum.
    const both = (await guest.run(['send', '@Olga see above', '--reply-to', first, '-q'])).stdout.trim();
    expect(both).not.toBe('');
    const overlapping = await owner.run(['inbox']);
    expect(overlapping.stderr).toContain(
      '1 unread for you (1 mention, 1 reply: some are both), of 2 messages',
    );
    expect((await owner.run(['inbox', '--ack'])).code).toBe(0);
    expect((await owner.run(['inbox', '--wait', '61'])).code).toBe(2);
  });

  it('follows the inbox, one JSON message per line, acknowledging each', async () => {
    const inbox = follow(owner, ['inbox', '--follow', '--json']);
    expect((await guest.run(['send', '@Olga are you there?'])).code).toBe(0);
    await inbox.waitFor('are you there?');
    expect(JSON.parse(inbox.stdout().trim().split('\n')[0]!)).toMatchObject({
      content: '@Olga are you there?',
    });
    // Stopped by Ctrl-C: exit 0, as tail.
    expect((await inbox.interrupt()).code).toBe(0);
  });

  it('follows with --wait as how long each read waits; --wait 0, which would never wait, is a usage error', async () => {
    const refused = await owner.run(['inbox', '--follow', '--wait', '0'], { timeoutMs: 15_000 });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--follow cannot take --wait 0');
    expect(refused.stderr).toContain('Give --wait 1 to 60');
    const json = await owner.run(['inbox', '--follow', '--wait', '0', '--json'], { timeoutMs: 15_000 });
    expect(JSON.parse(json.stderr)).toMatchObject({ exitCode: 2 });
    // Without --follow, 0 is a read that answers at once.
    expect((await owner.run(['inbox', '--wait', '0'])).code).toBe(0);
    const inbox = follow(owner, ['inbox', '--follow', '--wait', '1']);
    await inbox.waitFor('Following your inbox', { in: 'stderr' });
    expect((await guest.run(['send', '@Olga one more'])).code).toBe(0);
    await inbox.waitFor('one more');
    expect((await inbox.interrupt()).code).toBe(0);
  });
});

describe('inbox --follow when its connection is cut', () => {
  it('says the loss in words (`other side closed`), as tail does, not as a code of Node’s', async () => {
    // Between convene and the server, a relay whose connections can be cut, as a server that
    // drops (or a proxy restarting) cuts them, while the server itself stays up.
    const target = new URL(server.url);
    const sockets = new Set<Socket>();
    const relay = createServer((client) => {
      const upstream = connect(Number(target.port), target.hostname);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('error', () => {});
        socket.on('close', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const reader = new User(`http://127.0.0.1:${(relay.address() as AddressInfo).port}`);
    let inbox: ReturnType<typeof follow> | undefined;
    try {
      const { agentLink } = (await owner.run(['invite', '--json'])).json();
      expect((await reader.run(['join', agentLink, '--name', 'Ivo'])).code).toBe(0);
      inbox = follow(reader, ['inbox', '--follow', '--wait', '30'], { timeoutMs: 60_000 });
      await inbox.waitFor('Following your inbox', { in: 'stderr' });
      // Its long poll is out, waiting for a message, when the connection goes.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      for (const socket of sockets) socket.destroy();
      await inbox.waitFor('Reconnected', { in: 'stderr', timeoutMs: 30_000 });
      expect(inbox.stderr()).toContain('Connection lost (other side closed), reconnecting…');
      expect(inbox.stderr()).not.toContain('UND_ERR');
      // And it goes on.
      expect((await owner.run(['send', '@Ivo still there?'])).code).toBe(0);
      await inbox.waitFor('@Ivo still there?', { timeoutMs: 30_000 });
      expect((await inbox.interrupt()).code).toBe(0);
    } finally {
      // Not left following when an expectation failed.
      inbox?.child.kill();
      reader.remove();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => relay.close(resolve));
    }
  });
});

describe('names by their start, and @Words that mention nobody', () => {
  it('takes a unique start of a name for --mention and the moderation verbs; several is a usage error naming them', async () => {
    const hana = new User(server.url);
    const ada = new User(server.url);
    const adam = new User(server.url);
    try {
      await hana.run(['space', 'create', 'Freeze', '--owner-name', 'Hana Host']);
      await joinAs(hana, ada, 'Ada Lovelace');
      await joinAs(hana, adam, 'Adam Smith');
      const ids = Object.fromEntries(
        (await hana.run(['participants', '--json'])).json().map((p: any) => [p.name, p.participantId]),
      );

      // "ada" starts two names: refused (exit 2), naming both; "adam" starts one.
      const both = await hana.run(['send', 'Sure', '--mention', 'ada']);
      expect(both.code).toBe(2);
      expect(both.stderr).toContain('2 participants have names starting with "ada"');
      expect(both.stderr).toContain(`Ada Lovelace (${ids['Ada Lovelace']})`);
      expect(both.stderr).toContain(`Adam Smith (${ids['Adam Smith']})`);
      const one = await hana.run(['send', 'Sure', '--mention', 'ADAM', '--json']);
      expect(one.code).toBe(0);
      expect(one.json().mentions).toEqual([ids['Adam Smith']]);
      // The same for the verbs that take a participant.
      const twoToMute = await hana.run(['mute', 'ada']);
      expect(twoToMute.code).toBe(2);
      expect(twoToMute.stderr).toContain('2 participants have names starting with "ada"');
      expect((await hana.run(['mute', 'adam'])).stderr).toContain('Muted Adam Smith');
      // Not Adam Smith by elimination (the one muted): "ada" still starts both names.
      expect((await hana.run(['unmute', 'ada'])).code).toBe(2);
      expect((await hana.run(['unmute', 'Adam'])).stderr).toContain('Unmuted Adam Smith');
      expect((await hana.run(['kick', 'adam', '--yes'])).stderr).toContain('Removed Adam Smith');
      // Adam is gone: "ada" starts one name of those in the space.
      expect((await hana.run(['mute', 'ada'])).stderr).toContain('Muted Ada Lovelace');
      const statuses = (await hana.run(['participants', '--json']))
        .json()
        .map((p: any) => [p.name, p.status]);
      expect(statuses).toEqual([
        ['Hana Host', 'active'],
        ['Ada Lovelace', 'muted'],
        ['Adam Smith', 'kicked'],
      ]);
      expect((await hana.run(['unmute', 'ada'])).code).toBe(0);
    } finally {
      for (const u of [hana, ada, adam]) u.remove();
    }
  });

  it('says on stderr when an @Word mentions nobody, with the names it may have meant', async () => {
    const hana = new User(server.url);
    const ada = new User(server.url);
    try {
      await hana.run(['space', 'create', 'Freeze', '--owner-name', 'Hana Host']);
      await joinAs(hana, ada, 'Ada Lovelace');
      const stray = '(did you mean @Hana Host?): a mention is @ and a participant’s whole name, in any case';
      for (const text of ['@Hana what about the freeze?', '@hana-host ping', '@HanaHost ping3']) {
        const sent = await ada.run(['send', text]);
        expect({ text, code: sent.code }).toEqual({ text, code: 0 });
        expect(sent.stderr).toContain(`${text.split(' ')[0]} mentions nobody ${stray}`);
        expect(sent.stderr).toContain('The message was sent as it is.');
      }
      // A mention, in any case, followed by what cannot continue a name: nothing said.
      for (const text of ['@Hana Host can you look?', '@hana host, ping', 'cc @ada lovelace']) {
        const sent = await ada.run(['send', text]);
        expect({ text, said: sent.stderr }).toEqual({
          text,
          said: expect.not.stringContaining('mentions nobody'),
        });
      }
      // An e-mail address and a lone @ are not mentions; a word after an @ that names nobody is.
      const nobody = await ada.run(['send', 'mail ada@example.com @ 5pm, or @Bob.']);
      expect(nobody.stderr).not.toContain('example.com');
      expect(nobody.stderr).not.toContain('@ 5pm');
      expect(nobody.stderr).toContain(
        '@Bob mentions nobody: no participant’s name follows the @ (`convene participants` lists them).',
      );
      // With --json, stdout is the API's answer alone; the note is a JSON warning on stderr.
      const json = await ada.run(['send', '@Hana ping', '--json']);
      expect(json.json().mentions).toEqual([]);
      expect(JSON.parse(json.stderr.trim())).toEqual({
        warning: expect.stringContaining(`@Hana mentions nobody ${stray}`),
      });
      // Only text is read for @Names, by the server as here.
      expect((await ada.run(['send', '<p>@Hana</p>', '--html'])).stderr).not.toContain('mentions nobody');
      const messages = (await hana.run(['messages', '--json'])).json();
      const mentioned = messages.filter((m: any) => m.mentions.length > 0).map((m: any) => m.content);
      expect(mentioned).toEqual(['@Hana Host can you look?', '@hana host, ping', 'cc @ada lovelace']);
    } finally {
      for (const u of [hana, ada]) u.remove();
    }
  });
});

describe('webhook', () => {
  it('adds a webhook (its secret shown once), lists it and removes it; a private address is refused', async () => {
    // A public address literal: registering it needs no DNS, and it is removed before anything is sent.
    const url = 'https://93.184.215.14/convene-hook';
    const added = (await guest.run(['webhook', 'add', url, '--event', 'mention', '--json'])).json();
    expect(added).toMatchObject({ url, events: ['mention'], enabled: true, failures: 0 });
    expect(added.secret).toMatch(/^whsec_/);

    const listed = await guest.run(['webhook', 'list']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(added.id);
    expect(listed.stdout).toContain(url);
    expect(listed.stdout).not.toContain(added.secret);
    // The owner sees everyone's.
    expect((await owner.run(['webhook', 'list', '--json'])).json().map((w: any) => w.id)).toEqual([added.id]);

    // Event types are checked here, naming the valid ones, not by the server's validation.
    const bogus = await guest.run(['webhook', 'add', url, '--event', 'bogus']);
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toContain(
      'The event types are message, mention, participant-status, artifact-created, artifact-updated, artifact-locked, artifact-unlocked, space-closed, webhook-disabled.',
    );
    expect((await guest.run(['webhook', 'add', url, '-e', 'mentoin'])).stderr).toContain(
      'Did you mean mention?',
    );
    expect((await guest.run(['webhook', 'list', '--json'])).json()).toHaveLength(1);

    // The same URL again (as the server spells it or not) would deliver everything twice: refused,
    // naming the webhook there, and nothing is added.
    const twice = await guest.run(['webhook', 'add', url.replace('https', 'HTTPS')]);
    expect(twice.code).toBe(6);
    expect(twice.stderr).toContain(`you already have webhook ${added.id} POSTing mention to ${url}`);
    expect(twice.stderr).toContain(`\`convene webhook remove ${added.id.slice(0, 8)}\``);
    const twiceJson = await guest.run(['webhook', 'add', url, '-e', 'message', '--json']);
    expect(JSON.parse(twiceJson.stderr)).toMatchObject({ id: added.id, exitCode: 6 });
    expect((await guest.run(['webhook', 'list', '--json'])).json()).toHaveLength(1);
    // Another participant's webhook to it is theirs: the owner may add one of their own.
    const ownersTwin = (await owner.run(['webhook', 'add', url, '--json'])).json();
    expect(ownersTwin.url).toBe(url);
    expect((await owner.run(['webhook', 'remove', ownersTwin.id])).code).toBe(0);

    const refused = await guest.run(['webhook', 'add', 'http://127.0.0.1:9/hook']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('loopback, private and link-local addresses are not allowed');
    // The cause is the server's setting, not this command line: said, with how to start it so.
    expect(refused.stderr).toContain(
      `${server.url} refuses webhooks to loopback, private and link-local addresses unless it runs with WEBHOOK_ALLOW_PRIVATE=true (or lists the network in WEBHOOK_ALLOW_NETWORKS).`,
    );
    // Started again as it was: on its port (and its data), or it would be another server.
    expect(refused.stderr).toContain(
      `\`WEBHOOK_ALLOW_PRIVATE=true convene serve --port ${new URL(server.url).port}\` (with its --data-dir or --database-url again, if it was given one`,
    );
    expect(refused.stderr).not.toContain('--help');
    const refusedJson = await guest.run(['webhook', 'add', 'http://127.0.0.1:9/hook', '--json']);
    expect(JSON.parse(refusedJson.stderr)).toMatchObject({
      code: 'webhook_address_private',
      status: 400,
      exitCode: 2,
      hint: expect.stringContaining('WEBHOOK_ALLOW_PRIVATE=true'),
    });

    expect((await guest.run(['webhook', 'remove', added.id])).code).toBe(0);
    // Gone: the hint points at the webhooks, not at participants or documents.
    const again = await guest.run(['webhook', 'remove', added.id]);
    expect(again.code).toBe(5);
    expect(again.stderr).toContain('webhook not found');
    expect(again.stderr).toContain('`convene webhook list`');
    expect(again.stderr).not.toContain('convene participants');
    const after = await guest.run(['webhook', 'list']);
    expect(after.stderr + after.stdout).toContain('No webhooks yet');

    // In text, the secret is the data on standard output (`webhook add URL > secret` keeps it).
    const text = await guest.run(['webhook', 'add', url]);
    expect(text.code).toBe(0);
    expect(text.stdout.trim()).toMatch(/^whsec_\S+$/);
    expect(text.stderr).toContain(`will POST every event to ${url}`);
    const id = (await guest.run(['webhook', 'list', '--json'])).json()[0].id;
    expect((await guest.run(['webhook', 'remove', id])).code).toBe(0);
  });

  it('removes a webhook by the start of its id (4 characters or more), as other id arguments take', async () => {
    const url = 'https://93.184.215.14/convene-hook';
    const { id } = (await guest.run(['webhook', 'add', url, '--json'])).json();
    // Nothing starts with this (ids are lowercase hex).
    const none = await guest.run(['webhook', 'remove', 'zzzz']);
    expect(none.code).toBe(5);
    expect(none.stderr).toContain('no webhook "zzzz"');
    expect(none.stderr).toContain('`convene webhook list`');
    // Fewer than 4 characters name nothing, though this id starts so: said as a usage error.
    const short = await guest.run(['webhook', 'remove', id.slice(0, 3)]);
    expect(short.code).toBe(2);
    expect(short.stderr).toContain(`"${id.slice(0, 3)}" is too short to name a webhook`);
    expect(short.stderr).toContain('`convene webhook list`');
    expect((await guest.run(['webhook', 'list', '-q'])).stdout.trim()).toBe(id);
    const removed = await guest.run(['webhook', 'remove', id.slice(0, 8).toUpperCase(), '--json']);
    expect(removed.code).toBe(0);
    expect(removed.json()).toEqual({ id, deleted: true });
    expect((await guest.run(['webhook', 'list', '--json'])).json()).toEqual([]);
  });
});
