import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { editor, eventually, follow, joinAs, User } from './helpers/cli';
import { bundle } from './helpers/paths';
import { type Step, scriptedProxy } from './helpers/proxy';
import { startServer, type TestServer } from './helpers/server';
import { Terminal } from './helpers/tmux';

let server: TestServer;
let owner: User;
let guest: User;
let spaceId: string;

beforeAll(async () => {
  server = await startServer();
  owner = new User(server.url);
  guest = new User(server.url);
  spaceId = (await owner.run(['space', 'create', 'Chat', '--json'])).json().spaceId;
  await joinAs(owner, guest, 'Guest');
});
afterAll(async () => {
  await server?.close();
  owner?.remove();
  guest?.remove();
});

describe('send', () => {
  it('sends text from an argument, from stdin (-), from a file, as html and as an image', async () => {
    const sent = await guest.run(['send', 'hello there', '--json']);
    expect(sent.code).toBe(0);
    const body = sent.json();
    expect(body.messageId).toMatch(/^[0-9a-f-]{36}$/);
    // The API's own answer, context bundle included.
    expect(body.participants.map((p: any) => p.name)).toContain('Guest');

    expect((await guest.run(['send', '-'], { input: 'line one\nline two\n' })).code).toBe(0);
    // No text: what is piped or redirected in is the message (`… | convene send`).
    expect((await guest.run(['send'], { stdin: 'pipe', input: 'piped in\n' })).code).toBe(0);
    // Nothing, or spaces alone: nothing to send (exit 2), each said as it is.
    const blank = await guest.run(['send', '   ']);
    expect(blank.code).toBe(2);
    expect(blank.stderr).toContain('✗ the message is blank (spaces alone)');
    const empty = await guest.run(['send', '-'], { stdin: 'pipe', input: '' });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('✗ the message is empty');
    // A text whose end, past what a message holds, is blank: too long, not cut and sent as "hello".
    const padded = await guest.run(['send', '-'], { stdin: 'pipe', input: `hello${' '.repeat(300_000)}` });
    expect(padded.code).toBe(2);
    expect(padded.stderr).toContain('✗ the message is too long');
    // Bytes that are not UTF-8: refused (exit 2), not sent with U+FFFD in their place.
    const notText = await guest.run(['send', '-'], {
      stdin: 'pipe',
      input: Buffer.from('caf\xe9\n', 'latin1'),
    });
    expect(notText.code).toBe(2);
    expect(notText.stderr).toContain('✗ stdin is not UTF-8 text');
    expect((await guest.run(['send'], { stdin: 'file', input: 'redirected in\n' })).code).toBe(0);
    // Nothing piped (a runner's socket, /dev/null): no wait for it, the message is missing.
    for (const stdin of ['socket', 'null'] as const) {
      const none = await guest.run(['send'], { stdin });
      expect(none.code).toBe(2);
    }
    // More than a message holds, piped: said before anything is sent.
    const long = await guest.run(['send'], { stdin: 'pipe', input: 'x'.repeat(65_537) });
    expect(long.code).toBe(2);
    expect(long.stderr).toContain('a message holds at most 65,536 characters');
    const file = join(guest.home, 'note.html');
    // Saved with a byte order mark (Notepad, PowerShell): not part of the message.
    writeFileSync(file, '\uFEFF<p>from a <b>file</b></p>\n');
    expect((await guest.run(['send', '--file', file, '--html'])).code).toBe(0);
    expect(
      (await guest.run(['send', '--image', 'https://example.com/chart.png', '-q'])).stdout.trim(),
    ).toMatch(/^[0-9a-f-]{36}$/);
    // Naming the space first.
    expect((await owner.run(['send', 'Chat', 'owner speaking'])).code).toBe(0);
    // A text that starts with a dash, after `--` (as the help shows).
    expect((await guest.run(['send', '--', '-1 from me'])).code).toBe(0);

    const messages = (await owner.run(['messages', '--json'])).json();
    expect(messages.map((m: any) => [m.senderName, m.type, m.content])).toEqual([
      ['Guest', 'text', 'hello there'],
      ['Guest', 'text', 'line one\nline two'],
      ['Guest', 'text', 'piped in'],
      ['Guest', 'text', 'redirected in'],
      ['Guest', 'html', '<p>from a <b>file</b></p>'],
      ['Guest', 'image', 'https://example.com/chart.png'],
      [expect.any(String), 'text', 'owner speaking'],
      ['Guest', 'text', '-1 from me'],
    ]);
    expect(messages[6].isOwner).toBe(true);
  });

  it('takes the space as --space too, as the other commands of a space do', async () => {
    const solo = new User(server.url);
    try {
      expect((await solo.run(['space', 'create', 'First'])).code).toBe(0);
      expect((await solo.run(['space', 'create', 'Second'])).code).toBe(0); // now the default
      expect((await solo.run(['send', '--space', 'First', 'by option'])).code).toBe(0);
      const file = join(solo.home, 'note.txt');
      writeFileSync(file, 'from a file\n');
      expect((await solo.run(['send', '-s', 'first', '--file', file])).code).toBe(0);
      expect((await solo.run(['send', 'to the default'])).code).toBe(0);
      const contents = async (space: string) =>
        (await solo.run(['messages', space, '--json'])).json().map((m: any) => m.content);
      expect(await contents('First')).toEqual(['by option', 'from a file']);
      expect(await contents('Second')).toEqual(['to the default']);
      // The space named twice, or a word too many: a usage error, nothing sent.
      const twice = await solo.run(['send', 'Second', 'hi', '--space', 'First']);
      expect(twice.code).toBe(2);
      expect(twice.stderr).toContain('--space names the space');
      expect((await solo.run(['send', '--space', 'First', '--file', file, 'extra'])).code).toBe(2);
      expect(await contents('First')).toHaveLength(2);
    } finally {
      solo.remove();
    }
  });

  it('sends an image file as a data: URI of its type, refuses one too large or not an image, and shows a data: URI by its type and size (--json whole)', async () => {
    const painter = new User(server.url);
    try {
      expect((await painter.run(['space', 'create', 'Pictures'])).code).toBe(0);
      const at = (name: string, bytes: Buffer) => {
        writeFileSync(join(painter.home, name), bytes);
        return name;
      };
      // A PNG by its bytes, whatever its name says.
      const png = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(3000)]);
      const sent = await painter.run(['send', '--image', at('chart.bin', png), '--json'], {
        cwd: painter.home,
      });
      expect(sent.code, sent.stderr).toBe(0);
      const dataUri = `data:image/png;base64,${png.toString('base64')}`;
      const [image] = (await painter.run(['messages', '--json'])).json();
      expect(image).toMatchObject({ type: 'image', content: dataUri, id: sent.json().messageId });

      const text = await painter.run(['send', '--image', at('notes.txt', Buffer.from('hello\n'))], {
        cwd: painter.home,
      });
      expect(text.code).toBe(2);
      expect(text.stderr).toContain('notes.txt is not a PNG, JPEG, GIF or WebP image: nothing was sent');
      // Past what a data: URI of 1 MiB holds.
      const gif = Buffer.concat([Buffer.from('GIF89a'), Buffer.alloc(800_000)]);
      const big = await painter.run(['send', '--image', at('big.gif', gif)], { cwd: painter.home });
      expect(big.code).toBe(2);
      expect(big.stderr).toContain('big.gif is too large to send as an image: 781.3 KiB, where 768 KiB fit');
      const missing = await painter.run(['send', '--image', 'gone.png'], { cwd: painter.home });
      expect(missing.code).toBe(5);
      expect(missing.stderr).toContain('cannot open gone.png: no such file or directory');

      // Shown by its type and size; a reply to it names it so too.
      expect((await painter.run(['send', 'Nice one', '--reply-to', image.id])).code).toBe(0);
      const listed = await painter.run(['messages']);
      expect(listed.stdout).not.toContain('base64');
      expect(listed.stdout).toMatch(
        /Owner \(owner\): \[image\] image\/png, 2\.9 KiB \(a data: URI: --json has it whole\)\n/,
      );
      expect(listed.stdout).toMatch(/↪ in reply to Owner: \[image\] image\/png, 2\.9 KiB/);
      expect(Math.max(...listed.stdout.split('\n').map((line) => line.length))).toBeLessThan(120);
      const json = (await painter.run(['messages', '--json'])).json();
      expect(json[0].content).toBe(dataUri);
      const tail = follow(painter, ['tail']);
      await tail.waitFor('Nice one');
      expect(tail.stdout()).toMatch(/\[image\] image\/png, 2\.9 KiB/);
      expect(tail.stdout()).not.toContain('base64');
      await tail.interrupt();
    } finally {
      painter.remove();
    }
  });

  it('explains bad input: no text, too many words, --html with --image, a bad image, a missing file', async () => {
    const none = await guest.run(['send']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('Usage: convene send');
    const words = await guest.run(['send', 'hello', 'big', 'world']);
    expect(words.code).toBe(2);
    expect(words.stderr).toContain('Quote text with spaces');
    // With --space, a second word is too many too: said in one sentence, not a capital after `;`.
    const spaced = await guest.run(['send', 'PG room', 'x', '--space', 'Other']);
    expect(spaced.code).toBe(2);
    expect(spaced.stderr).toContain(
      '--space names the space, so only the text follows: quote text with spaces',
    );
    const both = await guest.run(['send', '--html', '--image', 'https://x.y/z.png']);
    expect(both.code).toBe(2);
    // `-` beside --image or --file is the message given twice, not a space called "-".
    for (const args of [
      ['send', '-', '--image', 'https://x.y/z.png'],
      ['send', '-', '--file', 'notes.md'],
    ]) {
      const dashed = await guest.run(args, { stdin: 'pipe', input: 'x\n' });
      expect({ args, code: dashed.code }).toEqual({ args, code: 2 });
      expect(dashed.stderr).toContain(
        `\`-\` (the message from stdin) and ${args[2]} both give the message: pass one`,
      );
      expect(dashed.stderr).not.toContain('no space');
    }
    const image = await guest.run(['send', '--image', 'http://insecure.example/x.png']);
    // Refused here, before a round trip the server would refuse: a usage error, saying what to give.
    expect(image.code).toBe(2);
    expect(image.stderr).toContain(
      '✗ --image takes an https: URL, a data:image/…;base64, URI or an image file, not "http://insecure.example/x.png": nothing was sent\nPages show images over https: only',
    );
    // What the server refuses of the rest (a data: URI of no image) points at the command's help.
    const data = await guest.run(['send', '--image', 'data:image/png;base64,!!']);
    expect(data.code).toBe(2);
    expect(data.stderr).toContain('See `convene send --help`.');
    // Characters as the server counts them: 40,000 emoji are 80,000 UTF-16 units, and go (in a
    // space of their own: the tests below read this one's last messages).
    const writer = new User(server.url);
    try {
      expect((await writer.run(['space', 'create', 'Long'])).code).toBe(0);
      const emoji = await writer.run(['send', '-', '--json'], { input: '🎉'.repeat(40_000) });
      expect(emoji.code, emoji.stderr).toBe(0);
      const long = await writer.run(['send', '-'], { input: 'a'.repeat(65_537) });
      expect(long.code).toBe(2);
      expect(long.stderr).toContain('the message is too long: a message holds at most 65,536 characters');
    } finally {
      writer.remove();
    }
    const missing = await guest.run(['send', '--file', join(guest.home, 'nope.txt')]);
    expect(missing.code).toBe(5);
    expect(missing.stderr).toContain('no such file');
    const directory = await guest.run(['send', '--file', guest.home]);
    expect(directory.code).toBe(1);
    expect(directory.stderr).toContain(`cannot open ${guest.home}: it is a directory`);
    expect(directory.stderr).toContain('Check the path');
    const unknownSpace = await guest.run(['send', 'Nowhere', 'hi']);
    expect(unknownSpace.code).toBe(5);
    expect(unknownSpace.stderr).toContain('no space "Nowhere" among those you hold keys for');
    // Two words unquoted are a space and a text: the likelier meaning is said too.
    const unquoted = await guest.run(['send', 'hello', 'world']);
    expect(unquoted.code).toBe(5);
    expect(unquoted.stderr).toContain('no space "hello"');
    // The words are said once, in the command that sends them.
    expect(unquoted.stderr).toContain(
      'To send the words as one message to the default space, quote them: convene send "hello world".',
    );
    expect(unquoted.stderr.split('"hello world"')).toHaveLength(2);
    // With `-` the text comes from stdin: the word before it can only be a space.
    const piped = await guest.run(['send', 'Nowhere', '-'], { input: 'from a pipe\n' });
    expect(piped.code).toBe(5);
    expect(piped.stderr).not.toContain('quote');
    // Nobody's default space to send to: no quoting hint that would fail there too.
    const newcomer = new User(server.url);
    try {
      const none = await newcomer.run(['send', 'hello', 'world']);
      expect(none.code).toBe(5);
      expect(none.stderr).not.toContain('quote');
    } finally {
      newcomer.remove();
    }
    // A caption beside --image is taken for a space: what it is for is said.
    const caption = await guest.run(['send', '--image', 'https://example.com/chart.png', 'our chart']);
    expect(caption.code).toBe(5);
    expect(caption.stderr).toContain('no space "our chart"');
    expect(caption.stderr).toContain(
      'With --image, the message is the image alone and a word beside it names the space: send "our chart" as a message of its own.',
    );
  });
});

/**
 * A server of its own with a tight rate limit (`env`), a user owning a space "Limited" on it, and
 * `spend()`, which spends the owner key's window and gives the seconds left in it (the refusal's
 * Retry-After); `close()` ends both.
 */
async function rateLimited(env: Record<string, string>) {
  const server = await startServer(env);
  const user = new User(server.url);
  const close = async () => {
    user.remove();
    await server.close();
  };
  try {
    const { spaceId, ownerPrivateKey } = (
      await user.run(['space', 'create', 'Limited', '--json'], { timeoutMs: 60_000 })
    ).json();
    const spend = async () => {
      for (;;) {
        const response = await fetch(`${server.url}/hub/space/${spaceId}`, {
          headers: { 'x-private-key': ownerPrivateKey },
        });
        if (response.status === 429) return Number(response.headers.get('retry-after'));
      }
    };
    return { user, spend, close };
  } catch (error) {
    await close();
    throw error;
  }
}

describe('the cost of a command', () => {
  it('never loads Node’s fetch (undici): sends, lists and reads the participants on convene’s own', async () => {
    // In a space of its own: the other tests read the file's space's messages.
    const solo = new User(server.url);
    try {
      expect((await solo.run(['space', 'create', 'Costs'])).code).toBe(0);
      // Printed as the process ends: the internal modules it loaded, by name.
      const probe = join(solo.home, 'loaded.cjs');
      writeFileSync(
        probe,
        "process.on('exit', () => process.stderr.write('loaded: ' + process.moduleLoadList.join(' ') + '\\n'));",
      );
      for (const args of [['send', 'costs little'], ['messages'], ['participants']]) {
        const run = await solo.run(args, { env: { NODE_OPTIONS: `--require ${probe}` } });
        expect(run.code).toBe(0);
        const loaded = run.stderr.match(/^loaded: (.*)$/m)?.[1];
        expect(loaded).toContain('NativeModule http');
        expect({ args, undici: loaded?.includes('undici') }).toEqual({ args, undici: false });
      }
    } finally {
      solo.remove();
    }
  });
});

describe('send refused for a while', () => {
  it('fails at once, with when to try again (exit 6), when the space’s message budget is spent: the minute is not waited out', async () => {
    const host = new User(server.url);
    const talker = new User(server.url);
    try {
      expect((await host.run(['space', 'create', 'Budgeted'])).code).toBe(0);
      await joinAs(host, talker, 'Talker');
      expect((await host.run(['space', 'update', '--max-messages-per-minute', '2'])).code).toBe(0);
      for (const text of ['one', 'two']) expect((await talker.run(['send', text])).code).toBe(0);
      const started = Date.now();
      const refused = await talker.run(['send', 'three'], { timeoutMs: 30_000 });
      // The SDK alone would wait the budget's Retry-After (up to a minute), twice, in silence.
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(refused.code).toBe(6);
      expect(refused.stderr).toMatch(
        /^✗ not sent: this space allows each participant 2 messages per minute\n/,
      );
      expect(refused.stderr).toMatch(/Try again in \d+ s:/);
      expect(refused.stderr).toContain('`convene space show` shows the budget');
      const json = await talker.run(['send', 'four', '--json'], { timeoutMs: 30_000 });
      expect(json.code).toBe(6);
      expect(JSON.parse(json.stderr)).toMatchObject({
        error: 'not sent: this space allows each participant 2 messages per minute',
        code: 'rate_limited',
        status: 429,
        retryAfter: expect.any(Number),
        exitCode: 6,
      });
      // Nothing was sent.
      const sent = (await host.run(['messages', '--json'])).json().map((m: any) => m.content);
      expect(sent).toEqual(['one', 'two']);
      // Said in its help, with the exit code.
      const help = (await talker.run(['send', '--help'])).stdout.replace(/\s+/g, ' ');
      expect(help).toContain('message budget');
      expect(help).toContain('exit 6');
    } finally {
      host.remove();
      talker.remove();
    }
  });

  it('says it waits for a stdin left open with nothing in it, then sends what comes', async () => {
    // A space of its own: the tests after this one count the messages of the shared one.
    const loner = new User(server.url);
    expect((await loner.run(['space', 'create', 'Quiet stdin'])).code).toBe(0);
    // Its stdin kept open (finished() would end it).
    const child = loner.spawn(['send', '-', '--json']);
    let stderr = '';
    child.stderr?.on('data', (chunk) => {
      stderr += chunk;
    });
    const code = new Promise((resolve) => child.once('close', resolve));
    await eventually(() => expect(stderr).toContain('waiting for stdin'), 15_000);
    expect(JSON.parse(stderr.trim())).toEqual({
      warning:
        'waiting for stdin, which is open but has brought nothing for 5 s (if nothing is to come, close it: < /dev/null)',
    });
    child.stdin?.end('late but sent\n');
    expect(await code).toBe(0);
    const listed = (await loner.run(['messages', '--json'])).json();
    expect(listed.map((m: any) => m.content)).toContain('late but sent');
    loner.remove();
  });

  it('sends after a Retry-After of a few seconds (the rate limit at the end of its window), saying it waits', async () => {
    const {
      user: someone,
      spend,
      close,
    } = await rateLimited({ RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW_S: '5' });
    try {
      for (const json of [false, true]) {
        // A window with 2 to 4 s left when the send meets it: a wait the SDK logs at info, not warn.
        let left = await spend();
        while (left < 3) {
          await new Promise((resolve) => setTimeout(resolve, left * 1000 + 200));
          left = await spend();
        }
        if (left === 5) await new Promise((resolve) => setTimeout(resolve, 1200));
        const sent = await someone.run(['send', 'after the wait', ...(json ? ['--json'] : [])], {
          timeoutMs: 30_000,
        });
        expect(sent.code).toBe(0);
        // With --json as a warning line, as an outage is said: a script can tell it from a hang.
        if (json)
          expect(JSON.parse(sent.stderr.trim())).toEqual({
            warning: expect.stringMatching(/^rate limit exceeded: trying again in [2-5] s$/),
          });
        else {
          expect(sent.stderr).toMatch(/^rate limit exceeded: trying again in [2-5] s$/m);
          expect(sent.stderr).toContain('Sent to Limited');
        }
      }
    } finally {
      await close();
    }
  });
});

/** A proxy in front of the test server playing `steps` to message sends (helpers/proxy.ts). */
const sendsScripted = (...steps: Step[]) => scripted(/^POST .*\/messages$/, ...steps);

/** As sendsScripted, for the requests whose `METHOD path` matches `which`. */
const scripted = (which: RegExp, ...steps: Step[]) => scriptedProxy(server.url, which, ...steps);

describe('a send whose answer was lost', () => {
  it('says a send that never reached the server not sent (the connection refused): nothing to look for', async () => {
    const proxy = await scriptedProxy(server.url, /^$/);
    const cut = new User(proxy.url);
    try {
      expect((await cut.run(['space', 'create', 'Cut off'])).code).toBe(0);
      await proxy.close();
      const refused = await cut.run(['send', 'anyone there?']);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(new RegExp(`^✗ not sent: cannot reach ${proxy.url}: `));
      expect(refused.stderr).not.toContain('may have been sent');
      const json = JSON.parse((await cut.run(['send', 'anyone there?', '--json'])).stderr);
      expect(json).toMatchObject({ error: expect.stringMatching(/^not sent: cannot reach /), exitCode: 1 });
      expect(json.mayHaveRun).toBeUndefined();
      // Under a key of yours, an earlier run may have sent it: not said not sent.
      const keyed = await cut.run(['send', 'anyone there?', '--idempotency-key', 'retry-1']);
      expect(keyed.code).toBe(1);
      expect(keyed.stderr).toMatch(new RegExp(`^✗ cannot reach ${proxy.url}: `));
    } finally {
      cut.remove();
    }
  });

  it('says the message may have been sent, and how to see whether it was, never "not sent"', async () => {
    // Every attempt's answer lost (the SDK sends it three times, with one Idempotency-Key).
    const lost = await sendsScripted('lost', 'lost', 'lost');
    const someone = new User(lost.url);
    try {
      expect((await someone.run(['space', 'create', 'Flaky'])).code).toBe(0);
      // --url given: every command line it suggests names the server again.
      const failed = await someone.run(['send', 'did it go?', '--url', lost.url], { timeoutMs: 60_000 });
      expect(failed.code).not.toBe(0);
      // Reached, though it did not answer.
      expect(failed.stderr).toMatch(
        /^✗ no answer from http:\/\/127\.0\.0\.1:\d+: other side closed \(sendMessage: POST/,
      );
      expect(failed.stderr).toContain(
        `The message may have been sent all the same: \`convene messages --url ${lost.url}\` shows whether it was; sent again with \`--idempotency-key `,
      );
      const key = /--idempotency-key ([0-9a-f-]{36})`/.exec(failed.stderr)?.[1];
      expect(key).toBeDefined();
      // It was, once; sent again under its key, it is not posted again, and says so.
      const again = await someone.run(['send', 'did it go?', '--idempotency-key', key!]);
      expect(again.code).toBe(0);
      expect(again.stderr).toContain(
        'Sent to Flaky, once: the server had a message under this key already, and did not post it again',
      );
      // The same key with another text: refused, and why.
      const other = await someone.run(['send', 'something else', '--idempotency-key', key!]);
      expect(other.code).toBe(2);
      expect(other.stderr).toContain(`✗ not sent: the key ${key} went with another message`);
      expect(other.stderr).toContain('Give a new --idempotency-key for a new message');
      const listed = (await someone.run(['messages', '--json'])).json().map((m: any) => m.content);
      expect(listed).toEqual(['did it go?']);
      // A key of one's own, first used: sent as any message is.
      // With --json, a script tells the first post from a replay under its key by `alreadySent`.
      const deploy = ['send', 'deploy finished', '--idempotency-key', 'deploy-42', '--json'];
      const own = await someone.run(deploy);
      expect(own.code).toBe(0);
      expect(own.json().alreadySent).toBeUndefined();
      const twice = await someone.run(deploy);
      expect(twice.code).toBe(0);
      expect(twice.json()).toMatchObject({ messageId: own.json().messageId, alreadySent: true });
      const after = (await someone.run(['messages', '--json'])).json().map((m: any) => m.content);
      expect(after).toEqual(['did it go?', 'deploy finished']);
      for (const bad of ['', 'k'.repeat(256)]) {
        const refused = await someone.run(['send', 'x', '--idempotency-key', bad]);
        expect(refused.code).toBe(2);
        expect(refused.stderr).toContain(`--idempotency-key takes 1 to 255 characters (${bad.length} given)`);
      }
      // What an HTTP header cannot carry, or loses (blank ends): said before anything else, even
      // with no space saved to send to.
      const newcomer = new User(lost.url);
      try {
        for (const bad of [' ', '🚀-42', 'a\nb', ' padded']) {
          const refused = await newcomer.run(['send', 'x', '--idempotency-key', bad]);
          expect({ bad, code: refused.code }).toEqual({ bad, code: 2 });
          expect(refused.stderr).toContain('--idempotency-key takes visible ASCII characters');
        }
      } finally {
        newcomer.remove();
      }
    } finally {
      someone.remove();
      await lost.close();
    }

    // The first answer lost, the retry refused for two minutes: not "not sent" (it was), exit 6.
    const refused = await sendsScripted('lost', '429', 'lost', '429');
    const other = new User(refused.url);
    try {
      expect((await other.run(['space', 'create', 'Limited'])).code).toBe(0);
      const failed = await other.run(['send', 'maybe'], { timeoutMs: 60_000 });
      expect(failed.code).toBe(6);
      expect(failed.stderr).not.toContain('not sent');
      expect(failed.stderr).toMatch(/^✗ rate limit exceeded\n/);
      expect(failed.stderr).toContain('The message may have been sent all the same');
      expect(failed.stderr).toContain('Try again in 120 s');
      const json = await other.run(['send', 'maybe again', '--json'], { timeoutMs: 60_000 });
      expect(json.code).toBe(6);
      expect(JSON.parse(json.stderr)).toMatchObject({
        status: 429,
        retryAfter: 120,
        mayHaveRun: true,
        idempotencyKey: expect.stringMatching(/^[0-9a-f-]{36}$/),
      });
      const listed = (await other.run(['messages', '--json'])).json().map((m: any) => m.content);
      expect(listed).toEqual(['maybe', 'maybe again']);
      // A send refused before anything ran is still "not sent", and says nothing of "may have".
      const never = await sendsScripted('429');
      try {
        const other2 = new User(never.url);
        try {
          expect((await other2.run(['space', 'create', 'Refused'])).code).toBe(0);
          const notSent = await other2.run(['send', 'no', '--json'], { timeoutMs: 60_000 });
          expect(notSent.code).toBe(6);
          const body = JSON.parse(notSent.stderr);
          expect(body.error).toBe('not sent: rate limit exceeded');
          expect(body.mayHaveRun).toBeUndefined();
          expect(body.hint).not.toContain('may have');
        } finally {
          other2.remove();
        }
      } finally {
        await never.close();
      }
    } finally {
      other.remove();
      await refused.close();
    }
  });

  it('says a send its own retry got through is sent, not "already sent"; a server shutting down did not send it', async () => {
    // The first attempt's answer lost: the SDK's retry, under the same key, gets it replayed.
    const once = await sendsScripted('lost', 'forward', '503', '503', '503');
    const someone = new User(once.url);
    try {
      expect((await someone.run(['space', 'create', 'Retried'])).code).toBe(0);
      const sent = await someone.run(['send', 'first time'], { timeoutMs: 60_000 });
      expect(sent.code).toBe(0);
      expect(sent.stderr).toBe('✓ Sent to Retried\n');
      // Refused three times as the server stops: nothing ran, and nothing says it may have.
      const stopping = await someone.run(['send', 'while it stops'], { timeoutMs: 60_000 });
      expect(stopping.code).toBe(1);
      expect(stopping.stderr).toMatch(
        /^✗ http:\/\/127\.0\.0\.1:\d+ is shutting down, and did not do it: the server is shutting down; retry shortly\n/,
      );
      expect(stopping.stderr).toContain('Try again once it is back; `convene doctor` checks it.');
      expect(stopping.stderr).not.toContain('may have');
      const listed = (await someone.run(['messages', '--json'])).json().map((m: any) => m.content);
      expect(listed).toEqual(['first time']);
    } finally {
      someone.remove();
      await once.close();
    }
    // Its first attempt's answer lost, then refused as the server stops: it may have been sent.
    const cut = await sendsScripted('lost', '503', '503');
    const other = new User(cut.url);
    try {
      expect((await other.run(['space', 'create', 'Cut'])).code).toBe(0);
      const failed = await other.run(['send', 'cut off'], { timeoutMs: 60_000 });
      expect(failed.code).toBe(1);
      expect(failed.stderr).toMatch(
        /^✗ http:\/\/127\.0\.0\.1:\d+ is shutting down: the server is shutting down/,
      );
      expect(failed.stderr).not.toContain('did not do it');
      expect(failed.stderr).toContain('The message may have been sent all the same');
      const listed = (await other.run(['messages', '--json'])).json().map((m: any) => m.content);
      expect(listed).toEqual(['cut off']);
    } finally {
      other.remove();
      await cut.close();
    }
  });

  it('says any write a command words itself may have been done: a moderation whose answer was lost, then refused', async () => {
    const proxy = await scripted(/^POST .*\/mute$/, 'lost', '409');
    const host = new User(proxy.url);
    const guest = new User(proxy.url);
    try {
      expect((await host.run(['space', 'create', 'Moderated'])).code).toBe(0);
      await joinAs(host, guest, 'Gil');
      const muted = await host.run(['mute', 'Gil', '--json'], { timeoutMs: 60_000 });
      expect(muted.code).toBe(6);
      const body = JSON.parse(muted.stderr);
      expect(body).toMatchObject({ status: 409, mayHaveRun: true });
      expect(body.hint).toMatch(
        /^It may have been done all the same: `convene participants` shows each one’s status\. /,
      );
      // It was done: the lost answer's attempt ran.
      const listed = (await host.run(['participants', '--json'])).json();
      expect(listed.find((p: any) => p.name === 'Gil').status).toBe('muted');
    } finally {
      host.remove();
      guest.remove();
      await proxy.close();
    }
  });

  it('says it once of a save `artifact edit` words itself: whose answer was lost, every time', async () => {
    const proxy = await scripted(/^PATCH .*\/artifact\/[0-9a-f-]+$/, 'lost', 'lost', 'lost');
    const writer = new User(proxy.url);
    try {
      expect((await writer.run(['space', 'create', 'Drafts'])).code).toBe(0);
      expect(
        (await writer.run(['artifact', 'create', 'plan.md', '--file', '-'], { input: 'one\n' })).code,
      ).toBe(0);
      const ed = editor(writer, 'append', 'printf "two\\n" >> "$1"');
      const saved = await writer.run(['artifact', 'edit', 'plan.md'], {
        env: { EDITOR: ed },
        timeoutMs: 60_000,
      });
      expect(saved.code).toBe(1);
      expect(saved.stderr).toMatch(/^✗ could not save plan\.md: no answer from /m);
      expect(saved.stderr.split('A new version may have been saved all the same')).toHaveLength(2);
      expect(saved.stderr).toContain('Your text is kept in');
      // It was saved: the first attempt ran.
      const doc = (await writer.run(['artifact', 'show', 'plan.md', '--json'])).json();
      expect(doc).toMatchObject({ version: 2, content: 'one\ntwo\n' });
    } finally {
      writer.remove();
      await proxy.close();
    }
  });
});

describe('any command refused for longer than a few seconds', () => {
  it('fails at once with exit 6 and when to try again, where the SDK alone would wait up to a minute', async () => {
    const {
      user: someone,
      spend,
      close,
    } = await rateLimited({ RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_S: '40' });
    try {
      await spend();
      const started = Date.now();
      const refused = await someone.run(['participants'], { timeoutMs: 60_000 });
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(refused.code).toBe(6);
      expect(refused.stderr).toMatch(/^✗ rate limit exceeded/);
      expect(refused.stderr).toMatch(/Try again in \d+ s: convene does not wait that long\./);
      const json = await someone.run(['messages', '--json'], { timeoutMs: 60_000 });
      expect(json.code).toBe(6);
      expect(JSON.parse(json.stderr)).toMatchObject({
        code: 'rate_limited',
        status: 429,
        retryAfter: expect.any(Number),
        exitCode: 6,
      });
    } finally {
      await close();
    }
  });
});

describe('messages --since', () => {
  it('refuses a number alone (seconds? minutes?) as a usage error naming the units', async () => {
    const bare = await owner.run(['messages', '--since', '17']);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('--since needs a unit: "17" alone would be 17 seconds ago');
    expect(bare.stderr).toContain('Write 17s (seconds), 17m (minutes), 17h (hours) or 17d (days)');
    expect((await owner.run(['tail', '--since', '5'])).code).toBe(2);
    for (const form of ['17s', '17m', '2h', '1d', 'yesterday', '09:30']) {
      const listed = await owner.run(['messages', '--since', form, '--json']);
      expect({ form, code: listed.code }).toEqual({ form, code: 0 });
    }
  });
});

describe('messages', () => {
  it('prints messages as text, keeps the last --limit, and starts after --since', async () => {
    const text = await owner.run(['messages']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/Guest: hello there/);
    expect(text.stdout).toMatch(/Guest: line one\n\s+line two/);
    expect(text.stdout).toMatch(/Guest: \[image\] https:\/\/example\.com\/chart\.png/);

    const last2 = (await owner.run(['messages', '--limit', '2', '--json'])).json();
    expect(last2.map((m: any) => m.content)).toEqual(['owner speaking', '-1 from me']);

    const all = (await owner.run(['messages', '--json'])).json();
    const since = (await owner.run(['messages', '--since', all[2].timestamp, '--json'])).json();
    expect(since.map((m: any) => m.id)).toEqual(all.slice(3).map((m: any) => m.id));
    const recent = (await owner.run(['messages', '--since', '1h', '--json'])).json();
    expect(recent).toHaveLength(all.length);
    const ids = (await owner.run(['messages', '-q'])).stdout.trim().split('\n');
    expect(ids).toEqual(all.map((m: any) => m.id));

    const fromYesterday = (await owner.run(['messages', '--since', 'yesterday', '--json'])).json();
    expect(fromYesterday).toHaveLength(all.length);
    const bad = await owner.run(['messages', '--since', 'last week']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--since takes a duration back from now');
    const badLimit = await owner.run(['messages', '--limit', 'x']);
    expect(badLimit.code).toBe(2);
    // A negative count is not "not a whole number": the error says what is taken.
    const negative = await owner.run(['messages', '--limit', '-1']);
    expect(negative.code).toBe(2);
    expect(negative.stderr).toContain('--limit must be 0 or a positive whole number (0: no limit), not "-1"');
    const lines = await owner.run(['tail', '--lines', '-1']);
    expect(lines.code).toBe(2);
    expect(lines.stderr).toContain('--lines must be 0 or a positive whole number, not "-1"');
  });

  it('waits with --wait for the first message after --since, and prints it as soon as it comes', async () => {
    const started = Date.now();
    const waiting = follow(owner, ['messages', '--since', '0s', '--wait', '30', '--json']);
    // Still waiting: nothing was said since.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(waiting.stdout()).toBe('');
    expect((await guest.run(['send', 'are you there?'])).code).toBe(0);
    const result = await waiting.done;
    expect(result.code).toBe(0);
    expect(result.json().map((m: any) => m.content)).toEqual(['are you there?']);
    expect(Date.now() - started).toBeLessThan(15_000);
    // Nothing said after a moment: an empty answer once the wait is over.
    const empty = await owner.run(['messages', '--since', '0s', '--wait', '1', '--json']);
    expect(empty.code).toBe(0);
    expect(empty.json()).toEqual([]);
    for (const bad of ['61', '-1', '1.5', 'x']) {
      const refused = await owner.run(['messages', '--wait', bad]);
      expect(refused.code, bad).toBe(2);
      expect(refused.stderr).toContain(`--wait must be a whole number of seconds from 0 to 60, not "${bad}"`);
    }
  });

  it('pages through more messages than one API page holds', async () => {
    const room = new User(server.url);
    try {
      await room.run(['space', 'create', 'Busy']);
      const key = room.credentials().hosts[server.url].spaces;
      const [space] = Object.values(key) as any[];
      // 520 messages straight through the API (faster than 520 processes); the CLI pages them.
      for (let i = 0; i < 520; i += 40) {
        await Promise.all(
          Array.from({ length: Math.min(40, 520 - i) }, (_, j) =>
            fetch(`${server.url}/hub/space/${space.spaceId}/messages`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'x-private-key': space.key },
              body: JSON.stringify({ content: `m${i + j}` }),
            }).then((r) => expect(r.status).toBe(200)),
          ),
        );
      }
      const all = (await room.run(['messages', '--limit', '0', '--json'])).json();
      expect(all).toHaveLength(520);
      expect(new Set(all.map((m: any) => m.id)).size).toBe(520);
      const seqs = all.map((m: any) => m.seq);
      expect(seqs).toEqual([...seqs].sort((a: number, b: number) => a - b));
      const cutJson = await room.run(['messages', '--json']);
      expect(cutJson.json()).toHaveLength(100);
      expect(JSON.parse(cutJson.stderr)).toEqual({
        warning: '420 earlier messages left out (--limit 100): --limit 0 lists them all.',
      });
      // What the default limit left out is said, on stderr (stdout holds the messages alone).
      const cut = await room.run(['messages']);
      expect(cut.stdout.match(/^\d\d:\d\d:\d\d {2}/gm)).toHaveLength(100);
      expect(cut.stderr).toContain('420 earlier messages left out (--limit 100): --limit 0 lists them all.');
      // After --since, every message (an archive by time loses none), unless --limit is given.
      const since = (await room.run(['messages', '--since', all[9].timestamp, '--json'])).json();
      expect(since.map((m: any) => m.id)).toEqual(all.slice(10).map((m: any) => m.id));
      const sinceCut = await room.run(['messages', '--since', all[9].timestamp, '--limit', '500']);
      expect(sinceCut.stderr).toContain('10 earlier messages left out (--limit 500)');
      expect((await room.run(['messages', '--limit', '0'])).stderr).not.toContain('left out');
    } finally {
      room.remove();
    }
  });
});

describe('replies in messages', () => {
  it('precede a reply with what it answers: its sender and start, or its id when not listed', async () => {
    const room = new User(server.url);
    const ada = new User(server.url);
    try {
      await room.run(['space', 'create', 'Threads', '--owner-name', 'Hana Host']);
      await joinAs(room, ada, 'Ada Lovelace');
      const question = (await ada.run(['send', 'Question for you', '-q'])).stdout.trim();
      const picture = (
        await ada.run(['send', '--image', 'https://example.com/chart.png', '-q'])
      ).stdout.trim();
      expect((await room.run(['send', 'Sure', '--reply-to', question])).code).toBe(0);
      expect((await room.run(['send', 'Nice chart', '--reply-to', picture])).code).toBe(0);
      const text = await room.run(['messages']);
      expect(text.stdout).toMatch(
        /^\d\d:\d\d:\d\d {2}[0-9a-f]{8} {2}Hana Host \(owner\): Sure\n {10}↪ in reply to Ada Lovelace: Question for you$/m,
      );
      expect(text.stdout).toMatch(
        /^.*Hana Host \(owner\): Nice chart\n {10}↪ in reply to Ada Lovelace: \[image\] https:\/\/example\.com\/chart\.png$/m,
      );
      // What it answers is older than what is listed: named by the start of its id.
      const last = await room.run(['messages', '--limit', '1']);
      expect(last.stdout).toMatch(/^ {10}↪ in reply to Ada Lovelace: \[image\]/m);
      const all = (await room.run(['messages', '--json'])).json();
      const since = await room.run(['messages', '--since', all[1].timestamp]);
      expect(since.stdout).toContain(`↪ in reply to message ${question.slice(0, 8)}\n`);
      expect(since.stdout).toContain(`↪ in reply to message ${picture.slice(0, 8)}\n`);
      // --json is the API's own: replyTo, no marker.
      expect(all.map((m: any) => m.replyTo)).toEqual([undefined, undefined, question, picture]);
    } finally {
      room.remove();
      ada.remove();
    }
  });
});

describe('message ids in text', () => {
  it('show each message by the start of its id, which --reply-to takes: read in text, answered without --json', async () => {
    const room = new User(server.url);
    const ada = new User(server.url);
    try {
      await room.run(['space', 'create', 'Short ids', '--owner-name', 'Hana Host']);
      await joinAs(room, ada, 'Ada Lovelace');
      expect((await ada.run(['send', 'Ship on Friday?'])).code).toBe(0);
      expect((await ada.run(['send', 'Or Monday?'])).code).toBe(0);
      const text = await room.run(['messages']);
      expect(text.code).toBe(0);
      // After the time, before the sender: the id's first 8 characters, as a reply marker shows them.
      const shown = text.stdout.match(/^\d\d:\d\d:\d\d {2}([0-9a-f]{8}) {2}Ada Lovelace: Ship on Friday\?$/m);
      expect(shown, text.stdout).not.toBeNull();
      const short = shown![1]!;
      const before = (await room.run(['messages', '--json'])).json();
      const question = before.find((m: any) => m.content === 'Ship on Friday?');
      expect(question.id.slice(0, 8)).toBe(short);

      const sent = await room.run(['send', 'Friday it is', '--reply-to', short, '--json']);
      expect(sent.code, sent.stderr).toBe(0);
      const after = (await room.run(['messages', '--json'])).json();
      const reply = after.find((m: any) => m.content === 'Friday it is');
      expect(reply.replyTo).toBe(question.id);
      // The reply's own short id is on its first line; the marker below it is as before.
      const again = (await room.run(['messages'])).stdout;
      expect(again).toContain(
        `  ${reply.id.slice(0, 8)}  Hana Host (owner): Friday it is\n          ↪ in reply to Ada Lovelace: Ship on Friday?\n`,
      );
    } finally {
      room.remove();
      ada.remove();
    }
  });

  it('says a --reply-to that names no message as not found (exit 5), a whole id as the start of one', async () => {
    const room = new User(server.url);
    try {
      await room.run(['space', 'create', 'Replies to nothing']);
      expect((await room.run(['send', 'First'])).code).toBe(0);
      const nobody = '00000000-0000-4000-8000-000000000000';
      for (const reference of ['zzzzzzzz', nobody]) {
        const sent = await room.run(['send', 'Answer', '--reply-to', reference]);
        expect({ reference, code: sent.code }).toEqual({ reference, code: 5 });
        expect(sent.stderr).toContain(`✗ no message "${reference}"`);
        expect(sent.stderr).toContain('See the messages and their ids with `convene messages -q`');
        expect(sent.stderr).not.toContain('--help');
        const json = await room.run(['send', 'Answer', '--reply-to', reference, '--json']);
        expect(JSON.parse(json.stderr)).toMatchObject({ error: `no message "${reference}"`, exitCode: 5 });
      }
      // Nothing was sent.
      expect((await room.run(['messages', '--json'])).json().map((m: any) => m.content)).toEqual(['First']);
    } finally {
      room.remove();
    }
  });
});

// None of what a terminal acts on: C0 but newline and tab, DEL, C1, bidirectional controls.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point.
const actedOn = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe('text from others, printed to a terminal', () => {
  // What a participant may put in a role, a message, a description or a document: a screen clear,
  // a window title (OSC … BEL), hidden text, a C1 CSI (U+009B) and a right-to-left override. A
  // name is one line without control characters (the server refuses the rest): a right-to-left
  // override is what it may hold.
  const attack = '\u001b[2J\u001b]0;pwned\u0007\u001b[8m\u009b8m\u202e';
  const shown = '\\x1b[2J\\x1b]0;pwned\\x07\\x1b[8m\\x9b8m\\u202e';
  const mal = 'Mal\u202eory';
  const malShown = 'Mal\\u202eory';
  const content = `x ${attack}\tend\nsecond line`;
  let mallory: User;
  let docId = '';

  beforeAll(async () => {
    mallory = new User(server.url);
    const { humanLink } = (await owner.run(['invite', '--json'])).json();
    const joined = await mallory.run(['join', humanLink, '--name', mal, '--role', `r${attack}`]);
    expect(joined.code).toBe(0);
    expect((await mallory.run(['send', '-'], { input: content })).code).toBe(0);
    const file = join(mallory.home, 'evil.md');
    writeFileSync(file, `# Title ${attack}\n\tindented\n`);
    const created = await mallory.run(['artifact', 'create', 'evil\u202e.md', '--file', file, '--json']);
    expect(created.code).toBe(0);
    docId = created.json().id;
    expect(
      (await owner.run(['space', 'update', '--description', `about ${attack}`, '--agenda', `1. ${attack}`]))
        .code,
    ).toBe(0);
  });
  afterAll(() => mallory?.remove());

  it('is shown with its control characters escaped, by every command that prints it', async () => {
    for (const [args, user] of [
      [['messages'], owner],
      [['participants'], owner],
      [['space', 'show'], guest],
      [['artifact', 'list'], owner],
      [['artifact', 'show', docId], owner],
    ] as const) {
      const result = await user.run([...args]);
      expect({ args, code: result.code }).toEqual({ args, code: 0 });
      expect({ args, stdout: result.stdout }).not.toEqual({ args, stdout: expect.stringMatching(actedOn) });
      expect(result.stdout).toContain(args[1] === 'list' ? 'evil\\u202e.md' : shown);
    }
    // Text of several lines keeps its lines and tabs.
    const messages = (await owner.run(['messages'])).stdout;
    expect(messages).toContain(`${malShown}: x ${shown}\tend\n`);
    expect(messages).toMatch(/\n\s+second line\n/);
    expect((await owner.run(['artifact', 'show', docId])).stdout).toContain(`# Title ${shown}\n\tindented\n`);
  });

  it('keeps a name to one line in errors, hints and label/value output', async () => {
    // Someone else's lock: the error names its holder.
    expect((await mallory.run(['artifact', 'lock', docId])).code).toBe(0);
    const locked = await guest.run(['artifact', 'lock', docId]);
    expect(locked.code).toBe(6);
    expect(locked.stderr).toContain(`locked by ${malShown} until`);
    // A suggestion quotes a name (one letter off: "Mal" alone is the start of the name, and names her).
    const mention = await guest.run(['send', 'hi', '--mention', 'Mal\u202eary']);
    expect(mention.code).toBe(5);
    expect(mention.stderr).toContain(`Did you mean "${malShown}"?`);
    // The holder and the author, in `artifact show`.
    const show = await owner.run(['artifact', 'show', docId]);
    expect(show.stdout).toContain(`by ${malShown}\n`);
    expect(show.stdout).toContain(` ${malShown}, lapses`);
    // Released: the tail test below sees it locked afresh.
    expect((await mallory.run(['artifact', 'unlock', docId])).code).toBe(0);
    // A space's name, in what `join` prints and in a suggestion of it.
    const host = new User(server.url);
    const visitor = new User(server.url);
    try {
      expect((await host.run(['space', 'create', 'Team\u202eB'])).code).toBe(0);
      const { humanLink } = (await host.run(['invite', '--json'])).json();
      const joined = await visitor.run(['join', humanLink, '--name', 'Vic']);
      expect(joined.code).toBe(0);
      expect(joined.stdout).toMatch(/^space {8}Team\\u202eB \(/m);
      const typo = await visitor.run(['space', 'use', 'Tea']);
      expect(typo.code).toBe(5);
      expect(typo.stderr).toContain('Did you mean "Team\\u202eB"?');
      for (const output of [joined.stdout, typo.stderr]) expect(output).not.toMatch(actedOn);
    } finally {
      host.remove();
      visitor.remove();
    }
    for (const output of [locked.stderr, mention.stderr, show.stdout]) expect(output).not.toMatch(actedOn);
  });

  it('is escaped in colour too, where the CLI’s own colours stay escape sequences', async () => {
    const result = await owner.run(['messages'], { env: { FORCE_COLOR: '1' } });
    expect(result.stdout).toContain('\u001b[1m');
    expect(result.stdout).toContain(shown);
    // Only colours (ESC [ … m) are left, and none of them is the 8m (hidden) of the attack.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: colours start with ESC.
    expect(result.stdout.replace(/\u001b\[[0-9;]*m/g, '')).not.toMatch(actedOn);
    expect(result.stdout).not.toContain('\u001b[8m');
  });

  it('is escaped as it streams (tail)', async () => {
    const tail = follow(owner, ['tail']);
    await tail.waitFor('second line');
    expect((await mallory.run(['artifact', 'lock', docId])).code).toBe(0);
    await tail.waitFor('locked by');
    expect((await tail.interrupt()).code).toBe(0);
    const stdout = tail.stdout();
    expect(stdout).toContain(`${malShown}: x ${shown}`);
    expect(stdout).toContain(`document "evil\\u202e.md" locked by ${malShown}`);
    expect(stdout).not.toMatch(actedOn);
  });

  it('stays exact in --json, and in a download to a file or a pipe; a download to a terminal is escaped', async () => {
    const json = await owner.run(['messages', '--json']);
    expect(json.json().at(-1).content).toBe(content);
    expect(json.stdout).not.toMatch(actedOn);
    const download = await owner.run(['artifact', 'download', docId]);
    expect(download.stdout).toBe(`# Title ${attack}\n\tindented\n`);
    const terminal = new Terminal(
      [process.execPath, bundle, 'artifact', 'download', docId],
      owner.env,
      owner.home,
    );
    try {
      await eventually(() => expect(terminal.screen()).toContain('EXIT=0'));
      expect(terminal.screen()).toContain(`# Title ${shown}`);
    } finally {
      terminal.close();
    }
  });

  it('is escaped in an error the server words', async () => {
    // A server that quotes what it was given in its error, as a Convene server may.
    const quoting = createServer((_request, response) => {
      response.writeHead(404, { 'content-type': 'application/json', 'api-version': '1' });
      response.end(JSON.stringify({ error: `space ${attack} not found` }));
    });
    await new Promise<void>((resolve) => quoting.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(quoting.address() as AddressInfo).port}`;
      const result = await owner.run(['join', spaceId, '--key', 'inv_x', '--url', url]);
      expect(result.code).toBe(5);
      expect(result.stderr).toContain(`space ${shown} not found`);
      expect(result.stderr).not.toMatch(actedOn);
      const json = await owner.run(['join', spaceId, '--key', 'inv_x', '--url', url, '--json']);
      expect(JSON.parse(json.stderr).error).toBe(`space ${attack} not found`);
      expect(json.stderr).not.toMatch(actedOn);
    } finally {
      quoting.close();
    }
  });
});

describe('text from elsewhere in warnings and usage errors', () => {
  it('is escaped in what the SDK warns of, such as the sunset date a server announces', async () => {
    // A header carries no ESC, but it may carry a C1 CSI (U+009B), which some terminals act on.
    const sunsetting = createServer((_request, response) => {
      response.writeHead(404, {
        'content-type': 'application/json',
        'api-version': '1',
        deprecation: 'true',
        sunset: 'soon \u009b2J\u009b8m',
      });
      response.end(JSON.stringify({ error: 'space not found' }));
    });
    await new Promise<void>((resolve) => sunsetting.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(sunsetting.address() as AddressInfo).port}`;
      const result = await owner.run(['join', spaceId, '--key', 'inv_x', '--url', url]);
      expect(result.code).toBe(5);
      expect(result.stderr).toContain('API version 1 is deprecated (sunset soon \\x9b2J\\x9b8m)');
      expect(result.stderr).not.toMatch(actedOn);
    } finally {
      sunsetting.close();
    }
  });

  it('is escaped in a usage error that quotes what was typed', async () => {
    const text = await owner.run(['send', '--x\u001b]0;pwned\u0007\u001b[2J', 'hi']);
    expect(text.code).toBe(2);
    expect(text.stderr).toContain("unknown option '--x\\x1b]0;pwned\\x07\\x1b[2J'");
    expect(text.stderr).not.toMatch(actedOn);
    const json = await owner.run(['--json', 'send', '--x\u009b2J\u202e', 'hi']);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stderr).error).toBe("unknown option '--x\u009b2J\u202e'");
    expect(json.stderr).not.toMatch(actedOn);
  });
});

it('keeps its space id in the default-space record after sends', () => {
  expect(guest.credentials().hosts[server.url].defaultSpace).toBe(spaceId);
});
