import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { editor, eventually, follow, joinAs, User } from './helpers/cli';
import { bundle, cliRoot } from './helpers/paths';
import { scriptedProxy } from './helpers/proxy';
import { startServer, type TestServer } from './helpers/server';
import { Terminal } from './helpers/tmux';

let server: TestServer;
let host: User;
let humanLink: string;
const users: User[] = [];
const user = (url = server.url) => {
  const made = new User(url);
  users.push(made);
  return made;
};

/** Someone at `url` (a proxy's) who owns a space named `space` holding a document `name`. */
async function withDocument(url: string, space: string, name: string, content: string): Promise<User> {
  const made = user(url);
  expect((await made.run(['space', 'create', space])).code).toBe(0);
  expect((await made.run(['artifact', 'create', name], { input: content, stdin: 'pipe' })).code).toBe(0);
  return made;
}

beforeAll(async () => {
  server = await startServer();
  host = user();
  expect((await host.run(['space', 'create', 'Guarded', '--private'])).code).toBe(0);
  humanLink = (await host.run(['invite', '--json'])).json().humanLink;
});
afterAll(async () => {
  await server?.close();
  for (const made of users) made.remove();
});

/** Ctrl-C on a terminal: the key, through tmux, to the command waiting there. */
async function ctrlCOnTerminal(who: User, args: string[], waiting: string): Promise<string> {
  const terminal = new Terminal([process.execPath, bundle, ...args], who.env, who.home);
  try {
    await eventually(() => expect(terminal.screen()).toContain(waiting));
    terminal.press('C-c');
    await eventually(() => expect(terminal.screen()).toMatch(/EXIT=\d+/));
    return terminal.screen();
  } finally {
    terminal.close();
  }
}

/** SIGINT without a terminal, as a script's Ctrl-C or `timeout -s INT` sends it. */
async function sigintWithoutTerminal(who: User, args: string[], waiting: string) {
  const waits = follow(who, args);
  await waits.waitFor(waiting, { in: 'stderr' });
  return waits.interrupt();
}

describe('Ctrl-C while a wait goes on ends with 130 and what to do next', () => {
  it('join waiting for approval, on a terminal; the same join resumes the request', async () => {
    const visitor = user();
    const screen = await ctrlCOnTerminal(
      visitor,
      ['join', humanLink, '--name', 'Tess'],
      'Waiting for the owner to approve you',
    );
    expect(screen).toContain('EXIT=130');
    expect(screen).not.toContain('Canceled');
    expect(screen).toContain('stopped waiting for approval');
    expect(screen).toContain('run the same `convene join` again to keep waiting');
    // The request is still there: approved, the same join goes straight through.
    expect((await host.run(['approve', 'Tess'])).code).toBe(0);
    const again = await visitor.run(['join', humanLink, '--name', 'Tess']);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('Joined Guarded as Tess');
  });

  it('a prompt for a missing argument, on a terminal: nothing is done', async () => {
    const someone = user();
    const screen = await ctrlCOnTerminal(someone, ['space', 'create'], 'Name of the space');
    expect(screen).toContain('EXIT=130');
    expect(screen).toContain('Nothing was changed.');
    expect((await someone.run(['space', 'list', '--json'])).json()).toEqual([]);
  });

  it('join waiting for approval, without a terminal', async () => {
    const result = await sigintWithoutTerminal(
      user(),
      ['join', humanLink, '--name', 'Walt'],
      'Waiting for the owner to approve you',
    );
    expect(result.code).toBe(130);
    expect(result.stderr).toContain('run the same `convene join` again to keep waiting');
  });

  it('login waiting for the browser, on a terminal', async () => {
    const screen = await ctrlCOnTerminal(user(), ['login'], 'Waiting for you to approve in the browser');
    expect(screen).toContain('EXIT=130');
    expect(screen).not.toContain('Canceled');
    expect(screen).toContain('stopped waiting for the browser');
    expect(screen).toContain('run `convene login` again');
  });

  it('login waiting for the browser, without a terminal', async () => {
    const result = await sigintWithoutTerminal(
      user(),
      ['login'],
      'Waiting for you to approve in the browser',
    );
    expect(result.code).toBe(130);
    expect(result.stderr).toContain('stopped waiting for the browser');
    expect(result.stderr).toContain('run `convene login` again');
  });
});

describe('a stop is told from an end: the signal’s exit code (130 SIGINT, 143 SIGTERM, 129 SIGHUP)', () => {
  const signals = [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const;
  // Following ends by Ctrl-C, as issue 14 says of `tail`: exit 0. A supervisor's SIGTERM and a
  // closed terminal's SIGHUP are still told apart.
  const followingStops = [
    ['SIGINT', 0, null],
    ['SIGTERM', 143, 'SIGTERM'],
    ['SIGHUP', 129, 'SIGHUP'],
  ] as const;

  it('tail, piped and with --json, ends cleanly (Ctrl-C: exit 0; SIGTERM, SIGHUP: their codes) and says nothing more', async () => {
    for (const [signal, code, by] of followingStops) {
      for (const flags of [[], ['--json']]) {
        const tail = follow(host, ['tail', ...flags]);
        await (flags.length
          ? tail.waitFor('"event":"context"')
          : tail.waitFor('Following', { in: 'stderr' }));
        tail.child.kill(signal);
        const result = await tail.done;
        // SIGTERM and SIGHUP end it by the signal itself, as git and ssh end.
        expect({ flags, code: result.code, by: result.signal }).toEqual({ flags, code, by });
        // A stop is not an error: no line about it, on either stream.
        expect(result.stderr).not.toMatch(/✗|"error"|stopped|interrupted/);
      }
    }
  });

  it('inbox --follow ends cleanly as tail does (Ctrl-C: exit 0)', async () => {
    const owner = user();
    expect((await owner.run(['space', 'create', 'Open'])).code).toBe(0);
    const reader = user();
    await joinAs(owner, reader, 'Ivo');
    for (const [signal, code] of followingStops) {
      const inbox = follow(reader, ['inbox', '--follow']);
      await inbox.waitFor('Following your inbox', { in: 'stderr' });
      inbox.child.kill(signal);
      const result = await inbox.done;
      expect({ signal, code: result.code }).toEqual({ signal, code });
      expect(result.stderr).not.toContain('✗');
    }
  });

  it('join waiting for approval says it stopped waiting, with the signal’s code', async () => {
    for (const [signal, code] of signals) {
      const waits = follow(user(), ['join', humanLink, '--name', `Wes ${signal}`]);
      await waits.waitFor('Waiting for the owner to approve you', { in: 'stderr' });
      waits.child.kill(signal);
      const result = await waits.done;
      expect({ signal, code: result.code }).toEqual({ signal, code });
      expect(result.stderr).toContain('stopped waiting for approval');
    }
  });

  it('login waiting for the browser says it stopped waiting, with the signal’s code', async () => {
    for (const [signal, code] of signals.slice(1)) {
      const waits = follow(user(), ['login']);
      await waits.waitFor('Waiting for you to approve in the browser', { in: 'stderr' });
      waits.child.kill(signal);
      const result = await waits.done;
      expect({ signal, code: result.code }).toEqual({ signal, code });
      expect(result.stderr).toContain('stopped waiting for the browser');
    }
  });
});

describe('on a terminal, as a shell and its window expect', () => {
  it('Ctrl-C stops a shell loop that runs convene, not only the convene running', async () => {
    const looping = user();
    const convene = `"${process.execPath}" "${bundle}"`;
    const terminal = new Terminal(
      [
        'bash',
        '-c',
        `for i in 1 2; do ${convene} join '${humanLink}' --name "Loop $i"; echo "after join $i"; done`,
      ],
      looping.env,
      looping.home,
    );
    try {
      await eventually(() => expect(terminal.screen()).toContain('Waiting for the owner to approve you'));
      terminal.press('C-c');
      await eventually(() => expect(terminal.screen()).toMatch(/EXIT=\d+/));
      // bash goes on after a command that merely exited 130; convene ends by the SIGINT itself.
      expect(terminal.screen()).not.toContain('after join 1');
      expect(terminal.screen()).toContain('EXIT=130');
      expect(terminal.ended()).toEqual({ code: null, signal: 'SIGINT' });
    } finally {
      terminal.close();
    }
  });

  it('Ctrl-C ends tail on a terminal with exit 0, as issue 14 says', async () => {
    const watcher = user();
    expect((await watcher.run(['space', 'create', 'Watched'])).code).toBe(0);
    const screen = await ctrlCOnTerminal(watcher, ['tail', '--lines', '0'], 'Following Watched live');
    expect(screen).toContain('EXIT=0');
    expect(screen).not.toMatch(/✗|stopped|interrupted/);
  });

  it('tail whose terminal window is closed ends by SIGHUP, as the README says (129), not by a crash', async () => {
    const watcher = user();
    expect((await watcher.run(['space', 'create', 'Window'])).code).toBe(0);
    const terminal = new Terminal([process.execPath, bundle, 'tail'], watcher.env, watcher.home);
    try {
      await eventually(() => expect(terminal.screen()).toContain('Following Window live'));
    } finally {
      // The window closed: its terminal is gone, and every write to it fails (EIO).
      terminal.close();
    }
    // Node aborted (SIGABRT) or crashed (SIGSEGV) restoring the terminal that was gone.
    await eventually(() => expect(terminal.ended()).toEqual({ code: null, signal: 'SIGHUP' }));
  });

  it('ends by SIGHUP, not by a crash, when its terminal is gone before it ends with a code of its own', async () => {
    // Node restores the settings of the terminal it started on as it ends, and aborts (SIGABRT)
    // when that terminal is gone: a run that ends with 0 or 1 after its window closed ends by
    // SIGHUP instead, as a process the closing killed.
    for (const code of [0, 1]) {
      const terminal = new Terminal(
        [process.execPath, '--import', 'tsx', join(cliRoot, 'test/helpers/hangup-exit.ts'), String(code)],
        {},
        cliRoot,
      );
      try {
        await eventually(() => expect(terminal.screen()).toContain('ready'));
      } finally {
        terminal.close();
      }
      await eventually(() =>
        expect({ code, ended: terminal.ended() }).toEqual({ code, ended: { code: null, signal: 'SIGHUP' } }),
      );
    }
  });

  it('Ctrl-Z during a wait gives the shell its cursor back, and the wait takes it again when resumed', async () => {
    const visitor = user();
    const terminal = new Terminal(
      [process.execPath, bundle, 'join', humanLink, '--name', 'Zed'],
      visitor.env,
      visitor.home,
    );
    try {
      await eventually(() => expect(terminal.screen()).toContain('Waiting for the owner to approve you'));
      expect(terminal.cursorShown()).toBe(false);
      terminal.press('C-z');
      await eventually(() => expect(terminal.cursorShown()).toBe(true));
      // `fg`, as the shell would send it.
      terminal.resume();
      await eventually(() => expect(terminal.cursorShown()).toBe(false));
      terminal.press('C-c');
      await eventually(() => expect(terminal.screen()).toContain('EXIT=130'));
      expect(terminal.cursorShown()).toBe(true);
    } finally {
      terminal.close();
    }
  });

  it('a wait in a terminal narrower than its line keeps to one line, cut', async () => {
    const visitor = user();
    const terminal = new Terminal(
      [process.execPath, bundle, 'join', humanLink, '--name', 'Narrow'],
      visitor.env,
      visitor.home,
      { width: 24, height: 30 },
    );
    try {
      await eventually(() => expect(terminal.screen()).toContain('Waiting for the'));
      // A dozen frames: each drawn over the last, none on a line of its own.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const frames = terminal.screen().match(/[◒◐◓◑]/g) ?? [];
      expect(frames).toHaveLength(1);
      expect(terminal.screen()).toContain('…');
      terminal.press('C-c');
      await eventually(() => expect(terminal.screen()).toContain('EXIT=130'));
    } finally {
      terminal.close();
    }
  });
});

describe('a change stopped while its request is out says it may have been done', () => {
  it('send: Ctrl-C says the message may have been sent, with the key that sends it once; SIGTERM too (143)', async () => {
    // The server runs the send; its answer is held at the proxy while Ctrl-C comes.
    const proxy = await scriptedProxy(server.url, /^POST .*\/messages$/, 'hold', 'forward', 'hold');
    try {
      const sender = user(proxy.url);
      expect((await sender.run(['space', 'create', 'Held answers'])).code).toBe(0);
      const sending = follow(sender, ['send', 'Deploy done']);
      await eventually(() => expect(proxy.held()).toBe(1));
      const stopped = await sending.interrupt();
      expect(stopped.code).toBe(130);
      expect(stopped.stderr).toContain('✗ interrupted');
      expect(stopped.stderr).toContain(
        'The message may have been sent all the same: `convene messages` shows whether it was',
      );
      const key = /--idempotency-key ([0-9a-f-]{36})/.exec(stopped.stderr)?.[1];
      expect(key, stopped.stderr).toBeDefined();
      // It was: sent again under its key, it is not posted twice.
      const again = await sender.run(['send', 'Deploy done', '--idempotency-key', key!]);
      expect(again.code).toBe(0);
      expect(again.stderr).toContain('once: the server had a message under this key already');
      // SIGTERM, with --json: the same, as JSON, exit 143.
      const json = follow(sender, ['send', 'Second one', '--json']);
      await eventually(() => expect(proxy.held()).toBe(2));
      json.child.kill('SIGTERM');
      const terminated = await json.done;
      expect(terminated.code).toBe(143);
      expect(JSON.parse(terminated.stderr)).toMatchObject({
        error: 'stopped by SIGTERM',
        mayHaveRun: true,
        idempotencyKey: expect.stringMatching(/^[0-9a-f-]{36}$/),
        exitCode: 143,
      });
      const sent = (await sender.run(['messages', '--json'])).json().map((m: any) => m.content);
      expect(sent).toEqual(['Deploy done', 'Second one']);
    } finally {
      await proxy.close();
    }
  });

  it('every other change (space close, update, invite, artifact create, mute): Ctrl-C says it may have been made, and how to look; SIGTERM too (143)', async () => {
    // The server runs each change; its answer is held at the proxy while Ctrl-C comes. The first
    // invite, the guest's, goes through.
    const proxy = await scriptedProxy(
      server.url,
      /^(POST .*\/invite|PUT \/hub\/space\/[^/]+|POST .*\/artifact|POST .*\/mute|DELETE \/hub\/space\/[^/]+)$/,
      'forward',
      'hold',
      'hold',
      'hold',
      'hold',
      'hold',
    );
    try {
      const owner = user(proxy.url);
      expect((await owner.run(['space', 'create', 'Stopped changes'])).code).toBe(0);
      await joinAs(owner, user(proxy.url), 'Pat');
      const stop = async (args: string[], held: number) => {
        const running = follow(owner, args);
        await eventually(() => expect(proxy.held()).toBe(held));
        const stopped = await running.interrupt();
        expect({ args, code: stopped.code }).toEqual({ args, code: 130 });
        expect(stopped.stderr).toMatch(/^✗ interrupted\n/);
        return stopped.stderr.replace(/\s+/g, ' ');
      };
      expect(await stop(['invite'], 1)).toContain(
        'An invitation key may have been made all the same; shown to nobody, it lets nobody in. `convene invite` makes one to hand out.',
      );
      expect(await stop(['space', 'update', '--agenda', 'x'], 2)).toContain(
        'The change may have been saved all the same: `convene space show` shows the space as it is.',
      );
      expect(await stop(['artifact', 'create', 'z.md'], 3)).toContain(
        'The document may have been created all the same: `convene artifact list` shows whether it was.',
      );
      expect(await stop(['mute', 'Pat'], 4)).toContain(
        'It may have been done all the same: `convene participants` shows each one’s status.',
      );
      // Each went through.
      expect((await owner.run(['space', 'show', '--json'])).json()).toMatchObject({ agenda: 'x' });
      expect((await owner.run(['artifact', 'list', '--json'])).json().map((a: any) => a.name)).toEqual([
        'z.md',
      ]);
      const pat = (await owner.run(['participants', '--json'])).json().find((p: any) => p.name === 'Pat');
      expect(pat.status).toBe('muted');

      // SIGTERM, with --json: the same, as JSON, exit 143.
      const closing = follow(owner, ['space', 'close', '--yes', '--json']);
      await eventually(() => expect(proxy.held()).toBe(5));
      closing.child.kill('SIGTERM');
      const terminated = await closing.done;
      expect(terminated.code).toBe(143);
      expect(JSON.parse(terminated.stderr)).toMatchObject({
        error: 'stopped by SIGTERM',
        mayHaveRun: true,
        hint: 'The space may have been closed all the same: `convene space list` shows whether it was.',
        exitCode: 143,
      });
      expect((await owner.run(['space', 'list', '--json'])).json()[0]).toMatchObject({ state: 'closed' });
      // A read stopped the same way ends as it did: the exit code alone.
      const reading = follow(owner, ['participants']);
      reading.child.kill('SIGINT');
      const read = await reading.done;
      expect(read.code).toBe(130);
      expect(read.stderr).toBe('');
    } finally {
      await proxy.close();
    }
  });

  it('space create: Ctrl-C says the space may have been created, its key not kept', async () => {
    const proxy = await scriptedProxy(server.url, /^POST .*\/hub\/space$/, 'hold', 'hold');
    try {
      const creator = user(proxy.url);
      const creating = follow(creator, ['space', 'create', 'Half made']);
      await eventually(() => expect(proxy.held()).toBe(1));
      const stopped = await creating.interrupt();
      expect(stopped.code).toBe(130);
      expect(stopped.stderr).toContain('✗ interrupted');
      expect(stopped.stderr).toContain('The space may have been created all the same');
      // What became of its key, what becomes of the space, and what to do: precisely.
      expect(stopped.stderr.replace(/\s+/g, ' ')).toContain(
        'and its owner key is not saved here: the server gives that key only once, in the answer that was lost. ' +
          'You were not logged in, so no account holds its key either: nobody can get it back or use the space, ' +
          'and it closes by itself at the end of its time to live (--ttl; 24 hours when not given). ' +
          'Run the same `convene space create` again for a new space.',
      );
      // Logged in (a token sent with it): the dashboard lists it, and its key can be recovered.
      const withToken = follow(creator, ['space', 'create', 'Half made too'], {
        env: { CONVENE_TOKEN: 'usr_not-a-real-token' },
      });
      await eventually(() => expect(proxy.held()).toBe(2));
      const again = await withToken.interrupt();
      expect(again.code).toBe(130);
      expect(again.stderr.replace(/\s+/g, ' ')).toContain(
        'You are logged in: if it was created, your dashboard lists it, and `convene space use ID` recovers its key;',
      );
    } finally {
      await proxy.close();
    }
  });

  it('join: Ctrl-C while it reads the space it joined shows the key, and ends with 130', async () => {
    const owner = user();
    expect((await owner.run(['space', 'create', 'Open door'])).code).toBe(0);
    const link = (await owner.run(['invite', '--json'])).json().humanLink as string;
    const spaceId = new URL(link).pathname.split('/').pop()!;
    // The join goes through; the read of the space after it is held.
    const proxy = await scriptedProxy(server.url, new RegExp(`^GET /hub/space/${spaceId}$`), 'hold');
    try {
      const joining = follow(user(proxy.url), ['join', link, '--name', 'Quinn', '--url', proxy.url]);
      await eventually(() => expect(proxy.held()).toBe(1));
      const stopped = await joining.interrupt();
      expect(stopped.code).toBe(130);
      const said = stopped.stderr.replace(/\s+/g, ' ');
      expect(said).toContain('but could not keep its key: interrupted while reading the space');
      const participants = (await owner.run(['participants', '--json'])).json();
      const quinn = participants.find((p: any) => p.name === 'Quinn');
      expect(said).toMatch(new RegExp(`copy it now: [0-9a-f]{64} \\(participant ${quinn.participantId}\\)`));
    } finally {
      await proxy.close();
    }
  });

  it('artifact write: Ctrl-C says a version may have been saved, and the lock it took is released', async () => {
    const proxy = await scriptedProxy(server.url, /^PATCH .*\/artifact\/[^/]+$/, 'hold');
    try {
      const writer = await withDocument(proxy.url, 'Held writes', 'plan.md', '# Plan\n');
      const writing = follow(writer, ['artifact', 'write', 'plan.md'], {
        input: '# Plan v2\n',
        stdin: 'file',
      });
      await eventually(() => expect(proxy.held()).toBe(1));
      const stopped = await writing.interrupt();
      expect(stopped.code).toBe(130);
      expect(stopped.stderr).toContain('✗ interrupted');
      expect(stopped.stderr).toContain(
        'A new version may have been saved all the same: `convene artifact history "plan.md"` shows whether it was.\n',
      );
      // It was, and the lock taken for it is released: nobody holds it.
      const doc = (await writer.run(['artifact', 'show', 'plan.md', '--json'])).json();
      expect(doc).toMatchObject({ version: 2, content: '# Plan v2\n' });
      expect(doc.lockedBy ?? null).toBeNull();
    } finally {
      await proxy.close();
    }
  });

  it('artifact edit: Ctrl-C while its lock call is out ends it, and a lock the call took is released (SIGTERM: 143)', async () => {
    // The server takes the lock; its answer is held at the proxy while Ctrl-C comes.
    const proxy = await scriptedProxy(
      server.url,
      /^POST .*\/artifact\/[^/]+\/lock$/,
      'hold',
      'forward',
      'hold',
      'hold',
    );
    try {
      const writer = await withDocument(proxy.url, 'Held locks', 'plan.md', '# Plan\n');
      const opened = join(writer.home, 'opened');
      const ed = editor(writer, 'never', `touch "${opened}"\nprintf "mine\\n" >> "$1"`);
      const editing = follow(writer, ['artifact', 'edit', 'plan.md'], { env: { EDITOR: ed } });
      await eventually(() => expect(proxy.held()).toBe(1));
      const started = Date.now();
      const stopped = await editing.interrupt();
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(stopped.code).toBe(130);
      expect(stopped.stderr).toContain('✗ interrupted: nothing was edited');
      expect(stopped.stderr).toContain('The lock its call took was released.');
      expect(existsSync(opened)).toBe(false);
      const doc = (await writer.run(['artifact', 'show', 'plan.md', '--json'])).json();
      expect(doc).toMatchObject({ version: 1, content: '# Plan\n' });
      expect(doc.lockedBy ?? null).toBeNull();

      // SIGTERM, and the lock call asked again gets no answer either: the lock may be held, said so.
      const again = follow(writer, ['artifact', 'edit', 'plan.md', '--json'], { env: { EDITOR: ed } });
      await eventually(() => expect(proxy.held()).toBe(2));
      again.child.kill('SIGTERM');
      const terminated = await again.done;
      expect(terminated.code).toBe(143);
      expect(JSON.parse(terminated.stderr)).toMatchObject({
        error: 'stopped by SIGTERM: nothing was edited',
        mayHaveRun: true,
        hint: 'The lock may have been taken all the same: it lapses by itself, or `convene artifact unlock "plan.md"` releases it.',
        exitCode: 143,
      });
      expect(existsSync(opened)).toBe(false);
    } finally {
      await proxy.close();
    }
  });

  it('artifact lock: Ctrl-C while a lock call is out, waiting (--wait) or not, releases the lock it took; else says it may be held (SIGTERM: 143)', async () => {
    // The server takes the lock; its answer is held at the proxy while Ctrl-C comes.
    const proxy = await scriptedProxy(
      server.url,
      /^POST .*\/artifact\/[^/]+\/lock$/,
      // The first call held, then asked again by its Idempotency-Key: the lock was its.
      'hold',
      'forward',
      // --wait: someone holds the lock, then the next attempt takes it, its answer held.
      '423',
      'hold',
      // The first call held, and asked again, held too: nobody knows.
      'hold',
      'hold',
    );
    try {
      const locker = await withDocument(proxy.url, 'Locks stopped', 'plan.md', '# Plan\n');
      const lockedBy = async () =>
        (await locker.run(['artifact', 'list', '--json'])).json()[0].lockedBy ?? null;

      const locking = follow(locker, ['artifact', 'lock', 'plan.md']);
      await eventually(() => expect(proxy.held()).toBe(1));
      const stopped = await locking.interrupt();
      expect(stopped.code).toBe(130);
      expect(stopped.stderr).toContain('✗ interrupted: nothing was locked');
      expect(stopped.stderr).toContain('The lock its call took was released.');
      expect(await lockedBy()).toBeNull();

      // Stopped while --wait waits, an attempt out: it said "nothing was done", the lock left held.
      const waiting = follow(locker, ['artifact', 'lock', 'plan.md', '--wait', '1m']);
      await waiting.waitFor('waiting up to 1m for it', { in: 'stderr' });
      await eventually(() => expect(proxy.held()).toBe(2));
      const waited = await waiting.interrupt();
      expect(waited.code).toBe(130);
      expect(waited.stderr).toContain('✗ stopped waiting for the lock on "plan.md": nothing was done');
      expect(waited.stderr).toContain('The lock its call took was released.');
      expect(await lockedBy()).toBeNull();

      const again = follow(locker, ['artifact', 'lock', 'plan.md', '--json']);
      await eventually(() => expect(proxy.held()).toBe(3));
      const started = Date.now();
      again.child.kill('SIGTERM');
      const terminated = await again.done;
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(terminated.code).toBe(143);
      expect(terminated.stdout).toBe('');
      expect(JSON.parse(terminated.stderr)).toMatchObject({
        error: 'stopped by SIGTERM',
        mayHaveRun: true,
        hint: 'The lock may have been taken all the same: it lapses by itself, or `convene artifact unlock "plan.md"` releases it.',
        exitCode: 143,
      });
    } finally {
      await proxy.close();
    }
  });

  it('artifact write: a lock release that gets no answer is waited for 2 s, then said to be still held', async () => {
    // The write and then the release of its lock both held: nothing answers either.
    const proxy = await scriptedProxy(
      server.url,
      /^(PATCH .*\/artifact\/[^/]+|DELETE .*\/lock)$/,
      'hold',
      'hold',
    );
    try {
      const writer = await withDocument(proxy.url, 'Held releases', 'notes.md', 'one\n');
      const writing = follow(writer, ['artifact', 'write', 'notes.md'], { input: 'two\n', stdin: 'file' });
      await eventually(() => expect(proxy.held()).toBe(1));
      const started = Date.now();
      const stopped = await writing.interrupt();
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(proxy.held()).toBe(2);
      expect(stopped.code).toBe(130);
      expect(stopped.stderr).toContain('✗ interrupted');
      expect(stopped.stderr).toContain('A new version may have been saved all the same');
      expect(stopped.stderr).toContain(
        'The lock taken for it may still be held: it lapses by itself, or `convene artifact unlock "notes.md"` releases it.',
      );
    } finally {
      await proxy.close();
    }
  });
});
