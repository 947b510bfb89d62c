import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  eventually,
  finished,
  follow,
  joinAs,
  LEAKY_ENV,
  type RunResult,
  suggested,
  User,
} from './helpers/cli';
import { bundle } from './helpers/paths';
import { gateway } from './helpers/proxy';
import { startServer, type TestServer } from './helpers/server';
import { Terminal } from './helpers/tmux';

let server: TestServer;
let owner: User;
let guest: User;
let space: { spaceId: string; key: string };

beforeAll(async () => {
  server = await startServer();
  owner = new User(server.url);
  guest = new User(server.url);
  await owner.run(['space', 'create', 'Live']);
  space = Object.values(owner.credentials().hosts[server.url].spaces)[0] as any;
  // Twelve earlier messages, straight through the API.
  for (let i = 1; i <= 12; i++) await post(`earlier ${String(i).padStart(2, '0')}`);
});
// A restart test that fails between stopping the server and starting it again leaves it down:
// started again here, so that one failure does not fail every test after it.
afterEach(async () => {
  await server?.ensureStarted();
});
afterAll(async () => {
  await server?.close();
  owner?.remove();
  guest?.remove();
});

async function post(content: string) {
  const response = await fetch(`${server.url}/hub/space/${space.spaceId}/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-private-key': space.key },
    body: JSON.stringify({ content }),
  });
  expect(response.status).toBe(200);
}

const count = (text: string, part: string) => text.split(part).length - 1;

/**
 * `args` (tail, inbox --follow) run by `who` while the server is down, as text and with --json
 * (by `jsonWho`, when the two must not share one reader: inbox --follow acknowledges what it
 * printed, and the first to read a message would take it from the other): both wait for it,
 * saying what they wait for, and follow once it is back, where `send` posts what both must show.
 */
async function startedWhileDown(
  who: User,
  args: string[],
  send: (content: string) => Promise<void>,
  jsonWho: User = who,
  /** What must have happened before both are stopped (inbox --follow's acknowledgement). */
  beforeStop: () => Promise<unknown> = async () => {},
) {
  await server.stop();
  const text = follow(who, args, { timeoutMs: 90_000 });
  const json = follow(jsonWho, [...args, '--json'], { timeoutMs: 90_000 });
  // Nothing was followed yet, so nothing was lost: what it waits for, and how to start it.
  await text.waitFor(`Waiting for ${server.url} (ECONNREFUSED)…\n`, { in: 'stderr' });
  await text.waitFor('No server answers there. Start the server that keeps your spaces again', {
    in: 'stderr',
  });
  await json.waitFor(`{"warning":"Waiting for ${server.url} (ECONNREFUSED)…"}\n`, { in: 'stderr' });
  // Still waiting, a few tries later: it used to end at once, exit 1.
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  expect(text.child.exitCode).toBeNull();
  expect(json.child.exitCode).toBeNull();
  await server.start();
  // Said once the server answers, not when a message ends a read.
  await text.waitFor('Connected\n', { in: 'stderr', timeoutMs: 40_000 });
  await json.waitFor('{"warning":"Connected"}\n', { in: 'stderr', timeoutMs: 40_000 });
  await send('after a late start');
  for (const live of [text, json]) await live.waitFor('after a late start', { timeoutMs: 40_000 });
  await beforeStop();
  for (const result of await Promise.all([text.interrupt(), json.interrupt()])) expect(result.code).toBe(0);
  expect(count(text.stderr(), 'Waiting for')).toBe(1);
  expect(text.stderr().indexOf('Waiting for')).toBeLessThan(text.stderr().indexOf('Connected'));
  expect(text.stderr()).not.toMatch(/cannot reach|Connection lost|Reconnected/);
  expect(text.stdout()).not.toMatch(/Waiting for|Connected/);
  // The hint is a command line for a person: not among a script's warnings.
  expect(json.stderr()).not.toContain('No server answers there');
  expect(json.stderr().trim().split('\n').at(-1)).toBe('{"warning":"Connected"}');
  return { text, json };
}

/** Someone whose one saved space, at `url`, is the owner's, as `change` alters it. */
function holding(url: string, change: (entry: any) => any = (entry) => entry): User {
  const who = new User(url);
  const file = owner.credentials();
  const entry = change({ ...file.hosts[server.url].spaces[space.spaceId] });
  file.hosts = { [url]: { spaces: { [entry.spaceId]: entry }, defaultSpace: entry.spaceId } };
  mkdirSync(join(who.env.XDG_CONFIG_HOME!, 'convene'), { recursive: true, mode: 0o700 });
  writeFileSync(join(who.env.XDG_CONFIG_HOME!, 'convene/credentials.json'), JSON.stringify(file), {
    mode: 0o600,
  });
  return who;
}

describe('tail in a terminal', () => {
  it('shows the last lines, then messages, joins and locks live; survives a server restart; Ctrl-C stops it (exit 0)', async () => {
    const terminal = new Terminal([process.execPath, bundle, 'tail'], owner.env, owner.home);
    try {
      await eventually(() => expect(terminal.screen()).toContain('Following Live live'));
      const start = terminal.screen();
      // The last 10 of the backlog, oldest first; not the two before them.
      expect(start).toContain('earlier 03');
      expect(start).toContain('earlier 12');
      expect(start).not.toContain('earlier 02');
      expect(start.indexOf('earlier 03')).toBeLessThan(start.indexOf('earlier 12'));

      await joinAs(owner, guest, 'Gus');
      await eventually(() => expect(terminal.screen()).toContain('Gus joined'));

      expect((await guest.run(['send', 'hello from gus'])).code).toBe(0);
      await eventually(() => expect(terminal.screen()).toMatch(/Gus: hello from gus/));
      // A message that mentions you is marked; one that mentions someone else is not.
      const ownerId = (space as unknown as { participantId: string }).participantId;
      expect((await guest.run(['send', '--mention', ownerId, 'for the owner'])).code).toBe(0);
      await eventually(() => expect(terminal.screen()).toMatch(/Gus \[@you\]: for the owner/));
      expect(terminal.screen()).toMatch(/Gus: hello from gus/);

      expect((await guest.run(['artifact', 'create', 'notes.md'])).code).toBe(0);
      expect((await guest.run(['artifact', 'lock', 'notes.md'])).code).toBe(0);
      await eventually(() => expect(terminal.screen()).toMatch(/document "notes\.md" locked by Gus until/));
      expect((await guest.run(['artifact', 'unlock', 'notes.md'])).code).toBe(0);
      // Whose lock it was: the event names the document alone (a release, the owner's, a lapse).
      await eventually(() =>
        expect(terminal.screen()).toContain(`document "notes.md" unlocked (Gus’s lock)`),
      );
      // Each change brings a fresh context; none of them is a reconnection.
      expect(terminal.screen()).not.toContain('Reconnected');

      await server.stop();
      await server.start();
      expect((await guest.run(['send', 'after the restart'])).code).toBe(0);
      await eventually(() => expect(terminal.screen()).toMatch(/Gus: after the restart/), 40_000);
      const screen = terminal.screen();
      expect(count(screen, 'Reconnected')).toBe(1);
      // The drop is told when it happens, before the stream is back.
      expect(count(screen, 'Connection lost')).toBe(1);
      expect(screen.indexOf('Connection lost')).toBeLessThan(screen.indexOf('Reconnected'));
      // Nothing lost, nothing shown twice.
      expect(count(screen, 'hello from gus')).toBe(1);
      expect(count(screen, 'after the restart')).toBe(1);
      expect(count(screen, 'earlier 12')).toBe(1);

      terminal.press('C-c');
      await eventually(() => expect(terminal.screen()).toContain('EXIT=0'));
    } finally {
      terminal.close();
    }
  }, 120_000);
});

describe('tail across a restart, piped', () => {
  it('says on stderr that the connection was lost, then that it is back, as JSON with --json; stdout holds only events', async () => {
    const text = follow(owner, ['tail'], { timeoutMs: 90_000 });
    const json = follow(owner, ['tail', '--json'], { timeoutMs: 90_000 });
    await text.waitFor('Following Live live', { in: 'stderr' });
    await json.waitFor('"event":"context"');

    await server.stop();
    // Said while the server is down: a dropped connection is not a quiet space.
    await text.waitFor(/Connection lost \(.+\), reconnecting…\n/, { in: 'stderr' });
    expect(text.stderr()).not.toContain('Reconnected');
    await server.start();
    await post('piped after the restart');
    await text.waitFor('piped after the restart', { timeoutMs: 40_000 });
    await json.waitFor('piped after the restart', { timeoutMs: 40_000 });
    await text.waitFor('Reconnected', { in: 'stderr', timeoutMs: 40_000 });
    await json.waitFor('{"warning":"Reconnected"}\n', { in: 'stderr', timeoutMs: 40_000 });
    for (const result of await Promise.all([text.interrupt(), json.interrupt()])) expect(result.code).toBe(0);

    const notices = text.stderr();
    expect(count(notices, 'Connection lost')).toBe(1);
    expect(notices.indexOf('Connection lost')).toBeLessThan(notices.indexOf('Reconnected'));
    expect(text.stdout()).not.toMatch(/Connection lost|Reconnected/);
    // --json: nothing but NDJSON events on stdout; the same notices on stderr, one JSON warning a
    // line, as every warning is with --json, so a script piping stdout to jq can still see the outage.
    const warnings = json
      .stderr()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    for (const warning of warnings) expect(Object.keys(warning)).toEqual(['warning']);
    expect(warnings[0].warning).toMatch(/^Connection lost \(.+\), reconnecting…$/);
    expect(warnings.at(-1)).toEqual({ warning: 'Reconnected' });
    expect(warnings.filter((w) => w.warning.startsWith('Connection lost'))).toHaveLength(1);
    for (const line of json.stdout().trim().split('\n')) expect(JSON.parse(line)).toHaveProperty('event');
  }, 120_000);
});

describe('join across a restart, piped', () => {
  it('says while it waits for approval that the server does not answer, then that it is back', async () => {
    const host = new User(server.url);
    const joiner = new User(server.url);
    try {
      await host.run(['space', 'create', 'Waiting room', '--private']);
      const { agentLink } = (await host.run(['invite', '--json'])).json();
      const join = follow(joiner, ['join', agentLink, '--name', 'Wes'], { timeoutMs: 90_000 });
      await join.waitFor('Waiting for the owner to approve you…', { in: 'stderr' });

      await server.stop();
      // Said while the server is down: an outage is not an owner who has not decided yet.
      await join.waitFor(/\S+ does not answer \(ECONNREFUSED\); still waiting, trying again every 2 s…\n/, {
        in: 'stderr',
      });
      await server.start();
      await join.waitFor('Reconnected; waiting for the owner to approve you…', {
        in: 'stderr',
        timeoutMs: 40_000,
      });
      expect((await host.run(['approve', 'Wes', '--space', 'Waiting room'])).code).toBe(0);
      const joined = await join.done;
      expect(joined.code).toBe(0);
      expect(count(joined.stderr, 'does not answer')).toBe(1);
      expect(joined.stderr).toContain('Joined Waiting room as Wes');
    } finally {
      host.remove();
      joiner.remove();
    }
  }, 120_000);
});

describe('inbox --follow across a restart, piped', () => {
  it('says on stderr that the connection was lost, then that it is back, and goes on', async () => {
    const host = new User(server.url);
    const reader = new User(server.url);
    try {
      await host.run(['space', 'create', 'Mentions']);
      const { agentLink } = (await host.run(['invite', '--json'])).json();
      expect((await reader.run(['join', agentLink, '--name', 'Ines'])).code).toBe(0);
      const inbox = follow(reader, ['inbox', '--follow', '--wait', '2'], { timeoutMs: 90_000 });
      // Followed live first: the first read's failure is thrown, as any command's.
      expect((await host.run(['send', '@Ines before the restart'])).code).toBe(0);
      await inbox.waitFor('@Ines before the restart');

      await server.stop();
      // Why, as tail says it: the SDK tells the loss at its first failure, which may be the 503 of
      // the server shutting down as well as the refused connection after it.
      await inbox.waitFor(/Connection lost \(.+\), reconnecting…\n/, {
        in: 'stderr',
        timeoutMs: 40_000,
      });
      await server.start();
      await inbox.waitFor('Reconnected', { in: 'stderr', timeoutMs: 40_000 });
      expect((await host.run(['send', '@Ines after the restart'])).code).toBe(0);
      await inbox.waitFor('@Ines after the restart', { timeoutMs: 40_000 });
      expect((await inbox.interrupt()).code).toBe(0);
      expect(count(inbox.stderr(), 'Connection lost')).toBe(1);
      expect(inbox.stdout()).not.toMatch(/Connection lost|Reconnected/);
    } finally {
      host.remove();
      reader.remove();
    }
  }, 120_000);
});

describe('inbox --follow stopped during its first wait', () => {
  it('waits for the server to come back rather than ending, as after a first message', async () => {
    const host = new User(server.url);
    const reader = new User(server.url);
    try {
      await host.run(['space', 'create', 'First wait']);
      const { agentLink } = (await host.run(['invite', '--json'])).json();
      expect((await reader.run(['join', agentLink, '--name', 'Ilse'])).code).toBe(0);
      // Nothing to read: the first poll waits (30 s) when the server goes away under it.
      const inbox = follow(reader, ['inbox', '--follow', '--wait', '30'], { timeoutMs: 90_000 });
      await inbox.waitFor('Following your inbox', { in: 'stderr' });
      await new Promise((resolve) => setTimeout(resolve, 500));
      await server.stop();
      await inbox.waitFor('Connection lost', { in: 'stderr', timeoutMs: 40_000 });
      await server.start();
      await inbox.waitFor('Reconnected', { in: 'stderr', timeoutMs: 40_000 });
      expect((await host.run(['send', '@Ilse after the restart'])).code).toBe(0);
      await inbox.waitFor('@Ilse after the restart', { timeoutMs: 40_000 });
      expect((await inbox.interrupt()).code).toBe(0);
      expect(inbox.stderr()).not.toContain('cannot reach');
    } finally {
      host.remove();
      reader.remove();
    }
  }, 120_000);
});

describe('tail with the server down', () => {
  it('started while it is down, waits for it as it does once live, saying what it waits for; then follows', async () => {
    const { text, json } = await startedWhileDown(owner, ['tail', '--lines', '1'], post);
    expect(text.stderr()).toContain('Following Live live');
    expect(json.stdout()).toContain('"event":"context"');
  }, 120_000);

  it('started behind a proxy while Convene is away (its 502, 503, 504 pages), waits as for a refused connection; then follows (inbox --follow too)', async () => {
    const proxy = await gateway(server.url);
    const who = holding(proxy.url);
    try {
      proxy.away = 502;
      const tail = follow(who, ['tail', '--lines', '1'], { timeoutMs: 90_000 });
      const inbox = follow(who, ['inbox', '--follow', '--wait', '5'], { timeoutMs: 90_000 });
      // Said as a 5xx (the live connection rides them out), not as another server's answer.
      for (const live of [tail, inbox])
        await live.waitFor(new RegExp(`Waiting for ${proxy.url} \\(502 .*nginx\\)…\n`), { in: 'stderr' });
      for (const status of [503, 504]) {
        proxy.away = status;
        const before = proxy.refused();
        await eventually(() => expect(proxy.refused()).toBeGreaterThan(before + 3), 30_000);
      }
      expect(tail.child.exitCode).toBeNull();
      expect(inbox.child.exitCode).toBeNull();
      proxy.away = undefined;
      await tail.waitFor('Connected\n', { in: 'stderr', timeoutMs: 40_000 });
      await tail.waitFor('Following Live live', { in: 'stderr', timeoutMs: 40_000 });
      await inbox.waitFor('Connected\n', { in: 'stderr', timeoutMs: 40_000 });
      await post('behind the proxy');
      await tail.waitFor('behind the proxy', { timeoutMs: 40_000 });
      for (const live of [tail, inbox]) {
        expect((await live.interrupt()).code).toBe(0);
        expect(count(live.stderr(), 'Waiting for')).toBe(1);
        expect(live.stderr()).not.toMatch(/not a Convene server|Connection lost/);
      }
    } finally {
      who.remove();
      await proxy.close();
    }
  }, 120_000);

  it('ends at once for what waiting cannot fix: not a Convene server, a key it does not know, a space it does not have (inbox --follow too)', async () => {
    const web = createHttpServer((_request, response) => {
      response.writeHead(404, { 'content-type': 'text/html' });
      response.end('<h1>Not here</h1>');
    });
    await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
    const webUrl = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
    const cases = [
      [holding(webUrl), 1, 'is not a Convene server'],
      [
        holding(server.url, (e) => ({
          ...e,
          key: `${e.key.slice(0, -1)}${e.key.endsWith('0') ? '1' : '0'}`,
        })),
        4,
        'unknown key for this space',
      ],
      [
        holding(server.url, (e) => ({ ...e, spaceId: '00000000-0000-4000-8000-000000000000' })),
        5,
        'space not found',
      ],
    ] as const;
    try {
      for (const [who, code, said] of cases)
        for (const args of [['tail'], ['inbox', '--follow']]) {
          const started = Date.now();
          const live = await who.run(args, { timeoutMs: 30_000 });
          expect({ args, said, code: live.code }).toEqual({ args, said, code });
          expect(live.stderr).toContain(said);
          expect(live.stderr).not.toContain('reconnecting');
          expect(Date.now() - started).toBeLessThan(15_000);
        }
    } finally {
      for (const [who] of cases) who.remove();
      web.closeAllConnections();
      await new Promise((resolve) => web.close(resolve));
    }
  });
});

describe('inbox --follow with the server down', () => {
  it('started while it is down, waits for it as tail does, said the same way; then follows', async () => {
    const host = new User(server.url);
    const reader = new User(server.url);
    const jsonReader = new User(server.url);
    try {
      await host.run(['space', 'create', 'Late start']);
      const { agentLink } = (await host.run(['invite', '--json'])).json();
      expect((await reader.run(['join', agentLink, '--name', 'Lena'])).code).toBe(0);
      expect((await jsonReader.run(['join', agentLink, '--name', 'Lia'])).code).toBe(0);
      await startedWhileDown(
        reader,
        ['inbox', '--follow', '--wait', '5'],
        async (content) => {
          expect((await host.run(['send', `@Lena @Lia ${content}`])).code).toBe(0);
        },
        jsonReader,
        // Acknowledged once printed, by the next read it makes, while it still runs (a Ctrl-C
        // before that leaves the message unread, for the next run): the next run has nothing more.
        () =>
          eventually(async () => {
            for (const who of [reader, jsonReader])
              expect((await who.run(['inbox', '--json'])).json().messages).toEqual([]);
          }),
      );
    } finally {
      host.remove();
      reader.remove();
      jsonReader.remove();
    }
  }, 120_000);
});

describe('tail --json', () => {
  it('prints one JSON event per line (NDJSON) and exits 0 on SIGINT (Ctrl-C)', async () => {
    const tail = follow(owner, ['tail', '--json', '--since', '1h']);
    await tail.waitFor('"event":"context"');
    await post('a json line');
    await tail.waitFor('a json line');
    const result = await tail.interrupt();
    expect(result.code).toBe(0);
    // Stopped, not ended: no `{"ended": …}` line (nor anything else) on stderr.
    expect(result.stderr).toBe('');
    const events = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const messages = events.filter((e) => e.event === 'message').map((e) => e.data.content);
    // --since 1h: the whole backlog, then the live one.
    expect(messages.slice(0, 12)).toEqual(
      Array.from({ length: 12 }, (_, i) => `earlier ${String(i + 1).padStart(2, '0')}`),
    );
    expect(messages.at(-1)).toBe('a json line');
    for (const e of events.filter((e) => e.event !== 'context')) expect(e.id).toEqual(expect.any(Number));
    // As the README says: context lines carry no id.
    for (const e of events.filter((e) => e.event === 'context'))
      expect(Object.keys(e)).toEqual(['event', 'data']);
    const ids = events.filter((e) => e.id !== undefined).map((e) => e.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
  });

  it('starts with the last --lines of the messages after --since when both are given', async () => {
    const tail = follow(owner, ['tail', '--json', '--since', '1h', '--lines', '2']);
    await tail.waitFor('"event":"context"');
    const result = await tail.interrupt();
    const messages = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .filter((e) => e.event === 'message')
      .map((e) => e.data.content);
    expect(messages).toHaveLength(2);
    expect(messages).toEqual(
      (await owner.run(['messages', '--json']))
        .json()
        .slice(-2)
        .map((m: any) => m.content),
    );
  });
});

describe('at a terminal', () => {
  it('asks for a missing argument, in colour; with CI set it fails with usage instead', async () => {
    const someone = new User(server.url);
    const asked = new Terminal([process.execPath, bundle, 'space', 'create'], someone.env, someone.home);
    try {
      await eventually(() => expect(asked.screen()).toContain('Name of the space'));
      asked.press('Typed at the prompt', 'Enter');
      await eventually(() => expect(asked.screen()).toContain('EXIT=0'));
      expect(asked.screen()).toContain('Created public space Typed at the prompt');
      expect(asked.screen({ escapes: true })).toContain('\u001b[');
      expect((await someone.run(['space', 'show', '--json'])).json().name).toBe('Typed at the prompt');
    } finally {
      asked.close();
    }
    const automated = new Terminal(
      [process.execPath, bundle, 'space', 'create'],
      { ...someone.env, CI: '1' },
      someone.home,
    );
    try {
      await eventually(() => expect(automated.screen()).toContain('EXIT=2'));
      expect(automated.screen()).toContain('missing name of the space');
      // No foreground colour (ESC [3xm) anywhere.
      expect(automated.screen({ escapes: true })).not.toContain('\u001b[3');
    } finally {
      automated.close();
      someone.remove();
    }
  });

  it('shows a spinner while a join waits for approval, then the result', async () => {
    const host = new User(server.url);
    const visitor = new User(server.url);
    try {
      await host.run(['space', 'create', 'Guarded', '--private']);
      const { humanLink } = (await host.run(['invite', '--json'])).json();
      const waiting = new Terminal(
        [process.execPath, bundle, 'join', humanLink, '--name', 'Tess'],
        visitor.env,
        visitor.home,
      );
      try {
        await eventually(() => expect(waiting.screen()).toContain('Waiting for the owner to approve you'));
        expect((await host.run(['approve', 'Tess'])).code).toBe(0);
        await eventually(() => expect(waiting.screen()).toContain('EXIT=0'));
        // Done is said with the ✓ every other success line has (the spinner's ◇ was its own).
        expect(waiting.screen()).toContain('✓ Joined Guarded as Tess');
      } finally {
        waiting.close();
      }
    } finally {
      host.remove();
      visitor.remove();
    }
  });
});

describe('tail of documents and replies', () => {
  it('names who created and saved a document, and what a reply answers', async () => {
    const host = new User(server.url);
    const writer = new User(server.url);
    try {
      expect((await host.run(['space', 'create', 'Drafts', '--owner-name', 'Hana Host'])).code).toBe(0);
      await joinAs(host, writer, 'Ada Lovelace');
      const question = (await writer.run(['send', 'Question for you\nsecond line', '-q'])).stdout.trim();
      // A reply to a message of the backlog, held back and shown with it.
      expect((await host.run(['send', 'Sure', '--reply-to', question])).code).toBe(0);
      const tail = follow(host, ['tail']);
      await tail.waitFor('Following Drafts live', { in: 'stderr' });
      expect(tail.stdout()).toMatch(
        /^\d\d:\d\d:\d\d {2}[0-9a-f]{8} {2}Hana Host \(owner\): Sure\n {10}↪ in reply to Ada Lovelace: Question for you …$/m,
      );

      expect((await writer.run(['artifact', 'create', 'plan.md'])).code).toBe(0);
      await tail.waitFor('document "plan.md" created by Ada Lovelace');
      expect((await writer.run(['artifact', 'lock', 'plan.md'])).code).toBe(0);
      expect(
        (await writer.run(['artifact', 'write', 'plan.md'], { input: 'v2\n', stdin: 'pipe' })).code,
      ).toBe(0);
      await tail.waitFor('document "plan.md" is now version 2, saved by Ada Lovelace');
      expect((await writer.run(['artifact', 'unlock', 'plan.md'])).code).toBe(0);
      expect((await host.run(['artifact', 'create', 'notes.md'])).code).toBe(0);
      await tail.waitFor('document "notes.md" created by you');
      // Your own lock is yours as your own document is: "you", not your name.
      expect((await host.run(['artifact', 'lock', 'notes.md'])).code).toBe(0);
      // A lock that ends tomorrow (taken in the last minutes of the day) is said with its date.
      await tail.waitFor(
        /document "notes\.md" locked by you until (\d\d:\d\d:\d\d|\d{4}-\d\d-\d\d \d\d:\d\d)\n/,
      );
      expect((await host.run(['artifact', 'write', 'notes.md'], { input: 'n2\n', stdin: 'pipe' })).code).toBe(
        0,
      );
      await tail.waitFor('document "notes.md" is now version 2, saved by you');
      expect(tail.stdout()).not.toContain('locked by Hana Host');
      expect((await host.run(['artifact', 'unlock', 'notes.md'])).code).toBe(0);

      // Live, a reply to a message shown before it.
      const live = (await writer.run(['send', 'Shall we ship?', '-q'])).stdout.trim();
      expect((await host.run(['send', 'Yes', '--reply-to', live.slice(0, 8)])).code).toBe(0);
      await tail.waitFor(/Hana Host \(owner\): Yes\n {10}↪ in reply to Ada Lovelace: Shall we ship\?/);
      expect((await tail.interrupt()).code).toBe(0);
    } finally {
      host.remove();
      writer.remove();
    }
  });
});

describe('tail started after someone asked to join', () => {
  it('shows the requests already waiting, once, with no made-up time; the owner alone is shown approve', async () => {
    const host = new User(server.url);
    const member = new User(server.url);
    const visitor = new User(server.url);
    const bot = new User(server.url);
    try {
      await host.run(['space', 'create', 'Doorstep', '--private']);
      const { humanLink } = (await host.run(['invite', '--json'])).json();
      const waiting = async (name: string) =>
        eventually(async () =>
          expect(
            (await host.run(['participants', 'Doorstep', '--json'])).json().find((p: any) => p.name === name)
              ?.status,
          ).toBe('waitingForApproval'),
        );
      const admitted = follow(member, ['join', humanLink, '--name', 'Mo']);
      await waiting('Mo');
      expect((await host.run(['approve', 'Mo'])).code).toBe(0);
      expect((await admitted.done).code).toBe(0);
      // Another space becomes the default: the request's hint must still act on Doorstep.
      await host.run(['space', 'create', 'Porch']);
      const joining = follow(visitor, ['join', humanLink, '--name', 'Vera']);
      await waiting('Vera');
      // A message after her request: when she asked is not known, and not made up (it was the
      // time tail started, printed after this message as if she had asked later).
      expect((await member.run(['send', 'after Vera asked'])).code).toBe(0);

      const tail = follow(host, ['tail', 'Doorstep']);
      const [notice] = await tail.waitFor(
        'Vera is waiting to join (since before you started following; `convene approve "Vera" --space "Doorstep"`)',
      );
      await tail.waitFor('Following Doorstep live', { in: 'stderr' });
      // Its own line, after the earlier messages, with no time in front.
      expect(tail.stdout()).toMatch(/ Mo: after Vera asked\nVera is waiting to join/);
      // A participant is not shown the owner's approve, which would be refused (exit 4).
      const theirs = follow(member, ['tail']);
      await theirs.waitFor('Vera is waiting to join (since before you started following)\n');
      await theirs.waitFor('Following Doorstep live', { in: 'stderr' });

      // One asking while they follow, whose name starts with "-": the hint puts it after --.
      const asking = follow(bot, ['join', humanLink, '--name', '-bot']);
      const [live] = await tail.waitFor('-bot asks to join (`convene approve --space "Doorstep" -- "-bot"`)');
      await theirs.waitFor(/\d {2}-bot asks to join\n/);
      expect((await host.run(suggested(live)[0]!)).code).toBe(0);
      expect((await asking.done).code).toBe(0);
      // Copied as it is, the hint admits her.
      expect((await host.run(suggested(notice)[0]!)).code).toBe(0);
      await tail.waitFor('Vera was approved and joined');
      await theirs.waitFor('Vera was approved and joined');
      const tailed = await tail.interrupt();
      expect(tailed.code).toBe(0);
      expect(count(tailed.stdout, 'Vera is waiting to join')).toBe(1);
      expect(count(tailed.stdout, 'Vera asks to join')).toBe(0);
      const followed = await theirs.interrupt();
      expect(followed.stdout).not.toContain('convene approve');
      expect((await joining.done).code).toBe(0);
    } finally {
      for (const someone of [host, member, visitor, bot]) someone.remove();
    }
  });
});

describe('tail of a participant, with several requests of one name waiting', () => {
  it('says them once, counted, where the owner gets each with its own approve', async () => {
    const host = new User(server.url);
    const member = new User(server.url);
    const first = new User(server.url);
    const second = new User(server.url);
    try {
      await host.run(['space', 'create', 'Gate', '--private']);
      const { humanLink } = (await host.run(['invite', '--json'])).json();
      const waitingNamed = (name: string, count: number) =>
        eventually(async () =>
          expect(
            (await host.run(['participants', 'Gate', '--json']))
              .json()
              .filter((p: any) => p.name === name && p.status === 'waitingForApproval'),
          ).toHaveLength(count),
        );
      const admitted = follow(member, ['join', humanLink, '--name', 'Mo']);
      await waitingNamed('Mo', 1);
      expect((await host.run(['approve', 'Mo'])).code).toBe(0);
      expect((await admitted.done).code).toBe(0);
      const asking = [
        follow(first, ['join', humanLink, '--name', 'Eve']),
        follow(second, ['join', humanLink, '--name', 'Eve']),
      ];
      await waitingNamed('Eve', 2);

      const theirs = follow(member, ['tail']);
      await theirs.waitFor('Following Gate live', { in: 'stderr' });
      const mine = follow(host, ['tail', 'Gate']);
      await mine.waitFor('Following Gate live', { in: 'stderr' });
      const followed = await theirs.interrupt();
      expect(followed.stdout).toContain(
        'Eve is waiting to join (2 requests, since before you started following)\n',
      );
      expect(count(followed.stdout, 'Eve is waiting to join')).toBe(1);
      const owned = await mine.interrupt();
      expect(
        count(owned.stdout, 'Eve is waiting to join (since before you started following; `convene approve'),
      ).toBe(2);
      for (const request of asking) await request.interrupt();
    } finally {
      for (const someone of [host, member, first, second]) someone.remove();
    }
  });
});

describe('tail of a participant who is removed', () => {
  it('ends with the error of a key that stopped working (exit 4), as inbox --follow does', async () => {
    const host = new User(server.url);
    const member = new User(server.url);
    try {
      expect((await host.run(['space', 'create', 'Door'])).code).toBe(0);
      await joinAs(host, member, 'Kim');
      const tail = follow(member, ['tail']);
      await tail.waitFor('Following Door live', { in: 'stderr' });
      expect((await host.run(['kick', 'Kim'])).code).toBe(0);
      const result = await tail.done;
      expect(result.stdout).toContain('You (Kim) were removed');
      expect(result.stderr).toContain('you were removed from "Door": your key no longer works');
      expect(result.stderr).toContain('`convene leave "Door"` forgets it here');
      // Said as what happened, without a reconnection attempt before it.
      expect(result.stderr).not.toContain('reconnecting');
      expect(result.stderr).not.toContain('The stream ended');
      expect(result.code).toBe(4);
    } finally {
      host.remove();
      member.remove();
    }
  });
});

describe('tail --json of a participant who is removed, or of a space that closes', () => {
  it('says on stderr, in JSON, the code and status of the removal (exit 4), and that the space closed (exit 0)', async () => {
    const host = new User(server.url);
    const member = new User(server.url);
    try {
      expect((await host.run(['space', 'create', 'Gate'])).code).toBe(0);
      await joinAs(host, member, 'Kim');
      const removed = follow(member, ['tail', '--json']);
      await removed.waitFor('"event":"context"');
      expect((await host.run(['kick', 'Kim'])).code).toBe(0);
      const result = await removed.done;
      expect(result.code).toBe(4);
      // As a command the server refuses for it says it (`convene send hi --json`).
      expect(JSON.parse(result.stderr.trim().split('\n').at(-1)!)).toMatchObject({
        error: 'you were removed from "Gate": your key no longer works',
        code: 'participant_removed',
        status: 401,
        exitCode: 4,
      });

      // inbox --follow --json alike.
      expect((await host.run(['space', 'create', 'Gate 2'])).code).toBe(0);
      await joinAs(host, member, 'Kim');
      const inbox = follow(member, ['inbox', '--follow', '--wait', '2', '--json']);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect((await host.run(['kick', 'Kim', '--yes'])).code).toBe(0);
      const inboxResult = await inbox.done;
      expect(inboxResult.code).toBe(4);
      expect(JSON.parse(inboxResult.stderr.trim().split('\n').at(-1)!)).toMatchObject({
        error: 'you were removed from "Gate 2": your key no longer works',
        code: 'participant_removed',
        status: expect.any(Number),
        exitCode: 4,
      });

      const closing = follow(host, ['tail', 'Gate', '--json']);
      await closing.waitFor('"event":"context"');
      expect((await host.run(['space', 'close', 'Gate', '--yes'])).code).toBe(0);
      const closed = await closing.done;
      expect(closed.code).toBe(0);
      expect(closed.stdout).toContain('"event":"space-closed"');
      expect(closed.stderr).toBe(
        `${JSON.stringify({ ended: 'closed', message: '"Gate" was closed: nothing more will come.' })}\n`,
      );
    } finally {
      host.remove();
      member.remove();
    }
  });
});

describe('tail of a space that expires while the server is down', () => {
  it('ends as when it sees the space close (exit 0), though the event never reached it', async () => {
    const host = new User(server.url);
    try {
      expect((await host.run(['space', 'create', 'Brief', '--ttl', '8s'])).code).toBe(0);
      const expires = Date.now() + 8_000;
      const tail = follow(host, ['tail'], { timeoutMs: 90_000 });
      await tail.waitFor('Following Brief live', { in: 'stderr' });
      await server.stop();
      await tail.waitFor(/Connection lost \(.+\), reconnecting…\n/, { in: 'stderr' });
      // Down until the space is past its time to live: what ends it is the refused reconnection.
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, expires - Date.now()) + 1_000));
      await server.start();
      const result = await tail.done;
      expect(result.stdout).toContain('the space expired');
      expect(result.stderr).not.toContain('The stream ended');
      expect(result.stderr).not.toContain('✗');
      expect(result.code).toBe(0);
    } finally {
      host.remove();
    }
  }, 120_000);
});

describe('inbox --follow of a participant who is removed, who leaves, or whose space closes', () => {
  it('ends as tail does: exit 4 when removed, exit 0 when the space closes or you leave it elsewhere', async () => {
    const host = new User(server.url);
    const member = new User(server.url);
    try {
      expect((await host.run(['space', 'create', 'Hall'])).code).toBe(0);
      await joinAs(host, member, 'Lou');
      const removed = follow(member, ['inbox', '--follow', '--wait', '2']);
      await removed.waitFor('Following your inbox', { in: 'stderr' });
      // Kicked while it follows, not before its first read: the SDK ends quietly, the CLI says why.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect((await host.run(['kick', 'Lou', '--yes'])).code).toBe(0);
      const result = await removed.done;
      // tail's words and exit code.
      expect(result.stderr).toContain('you were removed from "Hall": your key no longer works');
      expect(result.stderr).toContain('`convene leave "Hall"` forgets it here');
      expect(result.code).toBe(4);

      // The space closes (renamed meanwhile, which the follower learns from a command it ran):
      // a normal end, exit 0, as tail's.
      expect((await host.run(['space', 'create', 'Porch'])).code).toBe(0);
      await joinAs(host, member, 'Lou');
      for (const json of [false, true]) {
        const name = json ? 'Porch JSON' : 'Porch';
        if (json) {
          expect((await host.run(['space', 'create', name])).code).toBe(0);
          await joinAs(host, member, 'Lou');
        }
        const closing = follow(member, ['inbox', '--follow', '--wait', '2', ...(json ? ['--json'] : [])]);
        if (!json) await closing.waitFor('Following your inbox', { in: 'stderr' });
        await new Promise((resolve) => setTimeout(resolve, 1000));
        expect((await host.run(['space', 'update', name, '--name', `${name} v2`])).code).toBe(0);
        expect((await member.run(['participants'])).code).toBe(0);
        expect((await host.run(['space', 'close', `${name} v2`, '--yes'])).code).toBe(0);
        const closed = await closing.done;
        expect({ json, code: closed.code }).toEqual({ json, code: 0 });
        // With --json, one line on stderr says how it ended, as a script cannot tell exit 0 from Ctrl-C's.
        if (json)
          expect(closed.stderr).toBe(
            `${JSON.stringify({ ended: 'closed', message: `"${name} v2" was closed: nothing more will come.` })}\n`,
          );
        else {
          expect(closed.stderr).toContain(`"${name} v2" was closed: nothing more will come.`);
          expect(closed.stderr).not.toContain('✗');
        }
      }

      // Left from another terminal: exit 0, as tail's "You (Lou) left".
      expect((await host.run(['space', 'create', 'Yard'])).code).toBe(0);
      await joinAs(host, member, 'Lou');
      const leaving = follow(member, ['inbox', '--follow', '--wait', '2']);
      await leaving.waitFor('Following your inbox', { in: 'stderr' });
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect((await member.run(['leave', 'Yard', '--yes'])).code).toBe(0);
      const left = await leaving.done;
      expect(left.code).toBe(0);
      expect(left.stderr).toContain('You left "Yard" (elsewhere): nothing more will come.');
    } finally {
      host.remove();
      member.remove();
    }
  });
});

describe('output that cannot be written', () => {
  /** `convene …args > /dev/full`, as a shell runs it: every write fails with ENOSPC, as on a full disk. */
  function toFullDisk(user: User, args: string[]): Promise<RunResult> {
    const base = { ...process.env };
    for (const name of LEAKY_ENV) delete base[name];
    const child = spawn('bash', ['-c', '"$@" > /dev/full', 'bash', process.execPath, bundle, ...args], {
      cwd: user.home,
      env: { ...base, ...user.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    return finished(child, { timeoutMs: 60_000 });
  }

  it('fails the run (exit 1) and says why, in words or JSON: a script must not take a cut file for the whole', async () => {
    const reader = new User(server.url);
    try {
      expect((await reader.run(['space', 'create', 'Archive'])).code).toBe(0);
      expect((await reader.run(['send', 'kept for the record'])).code).toBe(0);
      for (const args of [['messages'], ['messages', '--json'], ['--version']]) {
        const result = await toFullDisk(reader, args);
        expect({ args, code: result.code }).toEqual({ args, code: 1 });
        const said = 'cannot write the output: no space left on the device';
        if (args.includes('--json')) expect(JSON.parse(result.stderr)).toEqual({ error: said, exitCode: 1 });
        else expect(result.stderr).toContain(`✗ ${said}`);
        expect(result.stderr).not.toMatch(/bug|ENOSPC|\n\s+at /);
      }
    } finally {
      reader.remove();
    }
  });
});

describe('a reader that stops early', () => {
  /** `convene …args | head -1` as a shell runs it; with pipefail the status is convene's. */
  function headOne(user: User, args: string[]): Promise<RunResult> {
    const base = { ...process.env };
    for (const name of LEAKY_ENV) delete base[name];
    const env = { ...base, ...user.env };
    const pipeline = spawn(
      'bash',
      ['-c', 'set -o pipefail; "$@" | head -1', 'bash', process.execPath, bundle, ...args],
      { cwd: user.home, env, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    return finished(pipeline, { timeoutMs: 60_000 });
  }

  it('leaves unread the mention that came once the reader was gone (inbox --follow | head -1)', async () => {
    const host = new User(server.url);
    const reader = new User(server.url);
    try {
      await host.run(['space', 'create', 'Wait for one']);
      const { agentLink } = (await host.run(['invite', '--json'])).json();
      expect((await reader.run(['join', agentLink, '--name', 'Hana'])).code).toBe(0);
      const pipeline = headOne(reader, ['inbox', '--follow']);
      expect((await host.run(['send', '@Hana the first'])).code).toBe(0);
      // head prints the first and exits; the next one finds nobody reading.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect((await host.run(['send', '@Hana the second'])).code).toBe(0);
      const result = await pipeline;
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('@Hana the first');
      expect(result.stderr).not.toMatch(/EPIPE|Error/);
      // What was printed to nobody is not acknowledged: the next run has it.
      const unread = (await reader.run(['inbox', '--json'])).json();
      expect(unread.messages.map((m: { content: string }) => m.content)).toEqual(['@Hana the second']);
    } finally {
      host.remove();
      reader.remove();
    }
  });

  it('ends convene quietly with exit 0 (messages, tail, tail --json)', async () => {
    const reader = new User(server.url);
    try {
      expect((await reader.run(['space', 'create', 'Long'])).code).toBe(0);
      const saved = Object.values(reader.credentials().hosts[server.url].spaces)[0] as any;
      // Far more than a pipe holds once head has its line and exits: convene is still writing.
      for (let i = 0; i < 12; i++) {
        const response = await fetch(`${server.url}/hub/space/${saved.spaceId}/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-private-key': saved.key },
          body: JSON.stringify({ content: `${i} ${'x'.repeat(60_000)}` }),
        });
        expect(response.status).toBe(200);
      }
      for (const args of [['messages'], ['tail'], ['tail', '--json']]) {
        const result = await headOne(reader, args);
        expect({ args, code: result.code }).toEqual({ args, code: 0 });
        // No stack trace: at most tail's "Following … live".
        expect(result.stderr).not.toMatch(/EPIPE|Error/);
        expect(result.stdout.split('\n')).toHaveLength(2);
      }
    } finally {
      reader.remove();
    }
  });
});
