import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ConnectionError,
  Convene,
  type ConveneError,
  NotFoundError,
  RateLimitError,
  ServiceUnavailableError,
  TimeoutError,
} from '@convene/sdk';
import stringWidth from 'fast-string-width';
import { afterAll, describe, expect, it } from 'vitest';
import { isJoinRefused, serverOfLink } from '../src/commands/join';
import { moderated } from '../src/commands/moderate';
import { mentionedId } from '../src/commands/send';
import { Creators } from '../src/commands/tail';
import { Changes, changeOf } from '../src/lib/changes';
import { commandLine } from '../src/lib/command-line';
import { normaliseUrl, rateLimitWait } from '../src/lib/context';
import { formatSeconds, parseDuration, parseSince, parseTtl, timeLeft } from '../src/lib/duration';
import { isPlainCommand, runEditor, safeFileName } from '../src/lib/editor';
import { UsageError } from '../src/lib/errors';
import {
  connectionState,
  plainHttp,
  refusedForNow,
  speaksPlainHttp,
  unreachableHint,
} from '../src/lib/failure';
import { checkVersion, imageContent } from '../src/lib/input';
import { makeDirectories } from '../src/lib/make-directories';
import { strayMentions } from '../src/lib/mentions';
import { sayConnectionLost, sayOutages } from '../src/lib/outage';
import { detectMode, neutralise, Output, terminalColumns } from '../src/lib/output';
import { promptOutput, withoutStyles } from '../src/lib/prompts';
import { quoted, shellWord, verbatim } from '../src/lib/quote';
import { MessagesSeen, printMessage, relative, when } from '../src/lib/render';
import { byIdStart, closest, find, hintName, pick } from '../src/lib/resolve';
import { CredentialStore, hostKey } from '../src/lib/store';
import { cliRoot } from './helpers/paths';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'convene-unit-'));
  dirs.push(dir);
  return dir;
};

/**
 * What an Output without colours writes, to stdout and stderr alike, while `print` runs; `stream`:
 * what the stream says of itself (a terminal, its width).
 */
function printed(print: (out: Output) => void, stream: { isTTY?: boolean; columns?: number } = {}): string {
  let text = '';
  const writable = Object.assign(
    { ...stream },
    {
      write: (chunk: string) => {
        text += chunk;
        return true;
      },
    },
  ) as unknown as NodeJS.WritableStream;
  print(
    new Output(
      { json: false, quiet: false, color: false, spin: false, interactive: false },
      writable,
      writable,
    ),
  );
  return text;
}

describe('the changes a run sent', () => {
  const base = 'http://localhost:3000/hub/space/3f2e8c1a-5b7d-4e9f-a2c6-1d0b9e8f7a65';
  const refused = () => Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } });
  const reset = () => Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNRESET' } });

  it('knows a change by its method and path, a read or a question as none', () => {
    expect(changeOf('DELETE', base)).toBe('closeSpace');
    expect(changeOf('PUT', base)).toBe('updateSpace');
    expect(changeOf('POST', `${base}/participants/x/mute`)).toBe('muteParticipant');
    expect(changeOf('DELETE', `${base}/artifact/a/lock`)).toBe('unlockArtifact');
    expect(changeOf('GET', base)).toBeUndefined();
    expect(changeOf('POST', 'http://localhost:3000/ask')).toBeUndefined();
  });

  it('holds a change out until an attempt of it is answered below 500; refused before it went out, nothing', async () => {
    const changes = new Changes();
    let answer: (response: Response) => void = () => {};
    const pending = new Promise<Response>((resolve) => {
      answer = resolve;
    });
    const fetches: Array<() => Promise<Response>> = [
      () => pending,
      () => Promise.reject(refused()),
      () => Promise.reject(reset()),
      () => Promise.reject(refused()),
      () => Promise.resolve(new Response('{}', { status: 503 })),
      () => Promise.resolve(new Response('{}', { status: 409 })),
    ];
    const fetch = changes.watch(() => fetches.shift()!());
    const out = fetch(base, { method: 'DELETE' });
    expect(changes.last()).toBe('closeSpace');
    answer(new Response('{}', { status: 200 }));
    await out;
    expect(changes.last()).toBeUndefined();
    // Refused: never sent, nothing done.
    const mute = `${base}/participants/x/mute`;
    await expect(fetch(mute, { method: 'POST' })).rejects.toThrow();
    expect(changes.last()).toBeUndefined();
    // Reset after it went out: it may have been done, and a refusal of its next attempt does not undo that.
    await expect(fetch(mute, { method: 'POST' })).rejects.toThrow();
    await expect(fetch(mute, { method: 'POST' })).rejects.toThrow();
    expect(changes.last()).toBe('muteParticipant');
    await fetch(mute, { method: 'POST' });
    expect(changes.last()).toBe('muteParticipant');
    await fetch(mute, { method: 'POST' });
    expect(changes.last()).toBeUndefined();
    // A read is not watched.
    const reads = new Changes().watch(() => pending);
    expect(await reads(base)).toBeInstanceOf(Response);
  });
});

describe('terminal width', () => {
  it('takes a terminal that reports 0 columns (or none) as 80 wide, prompts included', () => {
    expect(terminalColumns({ columns: 0 })).toBe(80);
    expect(terminalColumns({})).toBe(80);
    expect(terminalColumns({ columns: 120 })).toBe(120);
    const had = Object.getOwnPropertyDescriptor(process.stderr, 'columns');
    try {
      for (const color of [true, false]) {
        Object.defineProperty(process.stderr, 'columns', { value: 0, configurable: true });
        const out = new Output(detectMode({ color }, {}, { stdin: {}, stdout: {}, stderr: {} }));
        expect(promptOutput(out).columns).toBe(80);
        Object.defineProperty(process.stderr, 'columns', { value: 100, configurable: true });
        expect(promptOutput(out).columns).toBe(100);
      }
    } finally {
      if (had) Object.defineProperty(process.stderr, 'columns', had);
      else delete (process.stderr as { columns?: number }).columns;
    }
  });
});

describe('durations and times', () => {
  it('parses the durations people type', () => {
    expect(parseDuration('90')).toBe(90);
    expect(parseDuration('45s')).toBe(45);
    expect(parseDuration('2h')).toBe(7200);
    expect(parseDuration('1h30m')).toBe(5400);
    expect(parseDuration('7d')).toBe(604_800);
    expect(parseDuration('2 hours')).toBeUndefined();
    expect(parseTtl('30d')).toBe(2_592_000);
    expect(() => parseTtl('31d')).toThrow(/--ttl/);
    expect(() => parseTtl('0')).toThrow(/--ttl/);
    // A bare number would be seconds: `--ttl 2` meant as 2 hours closed the space 2 s later.
    expect(() => parseTtl('2')).toThrow(
      expect.objectContaining({
        exitCode: 2,
        message: '--ttl needs a unit: "2" alone would be 2 seconds',
        hint: 'Write 2h (hours), 2d (days), 2m (minutes) or 2s (seconds).',
      }),
    );
    expect(parseTtl('2s')).toBe(2);
    // An image by an address the service refuses is said before anything is sent.
    expect(() => imageContent('http://example.com/chart.png')).toThrow(
      expect.objectContaining({
        exitCode: 2,
        message:
          '--image takes an https: URL, a data:image/…;base64, URI or an image file, not "http://example.com/chart.png": nothing was sent',
        hint: 'Pages show images over https: only: give its https: address, or download it and give the file.',
      }),
    );
    expect(() => imageContent('ftp://example.com/chart.png')).toThrow(/--image takes an https: URL/);
    expect(imageContent('https://example.com/chart.png')).toBe('https://example.com/chart.png');
    expect(imageContent('HTTPS://example.com/a.png')).toBe('HTTPS://example.com/a.png');
    expect(imageContent('data:image/png;base64,iVBORw0KGgo=')).toBe('data:image/png;base64,iVBORw0KGgo=');
    expect(() => imageContent('DATA:image/png;base64,iVBORw0KGgo=')).toThrow(/--image takes an https: URL/);
    // A version before the document: said in their order.
    expect(() => checkVersion('plan.md', 'VERSION', { artifact: '2', command: 'artifact restore' })).toThrow(
      expect.objectContaining({
        exitCode: 2,
        message: 'VERSION must be a version number (1, 2, …), not "plan.md"',
        hint: 'The document comes first, then the version: `convene artifact restore "plan.md" 2`.',
      }),
    );
    const plain = (() => {
      try {
        checkVersion('x', 'VERSION', { artifact: 'plan.md', command: 'artifact restore' });
      } catch (error) {
        return error as UsageError;
      }
    })();
    expect(plain?.message).toBe('VERSION must be a version number (1, 2, …), not "x"');
    expect(plain?.hint).toBeUndefined();
    expect(formatSeconds(7199)).toBe('1h 59m');
    expect(formatSeconds(90_000)).toBe('1d 1h');
    // A time left, to the nearest minute: a space read a second after it opened is a day away too.
    expect([timeLeft(86_400), timeLeft(86_399), timeLeft(86_370)]).toEqual(['1d', '1d', '1d']);
    expect(timeLeft(3_569)).toBe('59m');
    expect(timeLeft(42)).toBe('42s');
    expect(formatSeconds(42)).toBe('42s');
  });

  it('reads --since as a duration, a date-time, or a local date, time or day', () => {
    const now = new Date('2030-01-01T12:00:00.000Z');
    expect(parseSince('10m', now)).toBe('2030-01-01T11:50:00.000Z');
    expect(parseSince('2030-01-01T10:00:00+02:00', now)).toBe('2030-01-01T10:00:00+02:00');
    expect(parseSince('2030-01-01T10:00:00.123456Z', now)).toBe('2030-01-01T10:00:00.123456Z');
    expect(parseSince('2030-01-01 10:00:00Z', now)).toBe('2030-01-01T10:00:00Z');
    // Without a zone: this machine's local time.
    const local = new Date(2030, 0, 1, 12, 0, 0);
    const iso = (...parts: number[]) => new Date(...(parts as [number, number, number])).toISOString();
    expect(parseSince('2029-12-31', local)).toBe(iso(2029, 11, 31));
    expect(parseSince('2029-12-31 18:30', local)).toBe(iso(2029, 11, 31, 18, 30));
    expect(parseSince('2029-12-31T18:30:15', local)).toBe(iso(2029, 11, 31, 18, 30, 15));
    expect(parseSince('09:30', local)).toBe(iso(2030, 0, 1, 9, 30));
    // A time of day still to come is yesterday's.
    expect(parseSince('23:00', local)).toBe(iso(2029, 11, 31, 23, 0));
    expect(parseSince('today', local)).toBe(iso(2030, 0, 1));
    expect(parseSince('Yesterday', local)).toBe(iso(2029, 11, 31));
    for (const wrong of ['last week', '2030-02-31', '25:00', '2030-01-01 24:00', '1 hour']) {
      expect(() => parseSince(wrong, now)).toThrow(/--since takes a duration back from now/);
    }
    // A number alone: seconds, minutes? As for --ttl, a usage error naming the units.
    for (const bare of ['17', '0', ' 90 ']) {
      const n = bare.trim();
      expect(() => parseSince(bare, now)).toThrow(
        expect.objectContaining({
          exitCode: 2,
          message: `--since needs a unit: "${n}" alone would be ${n} seconds ago`,
          hint: `Write ${n}s (seconds), ${n}m (minutes), ${n}h (hours) or ${n}d (days) back from now, or a time (09:30) or date (2030-01-01).`,
        }),
      );
    }
    // Every documented form still works.
    for (const form of [
      '0s',
      '17s',
      '17m',
      '2h',
      '1d',
      '1h30m',
      '1w',
      '09:30',
      'today',
      'yesterday',
      '2029-12-31',
    ]) {
      expect(() => parseSince(form, now)).not.toThrow();
    }
    expect(parseSince('17s', now)).toBe('2030-01-01T11:59:43.000Z');
  });

  it('names an instant by its time today, and by date and time on another day', () => {
    const now = new Date(2030, 0, 1, 23, 55, 0);
    expect(when(new Date(2030, 0, 1, 23, 59, 30).toISOString(), now)).toBe('23:59:30');
    // A lock taken five minutes before midnight ends tomorrow.
    expect(when(new Date(2030, 0, 2, 0, 5, 0).toISOString(), now)).toBe('2030-01-02 00:05');
    expect(relative(new Date(2030, 0, 2, 0, 5, 0).toISOString(), now)).toBe('in 10 min');
    expect(relative(new Date(2030, 0, 1, 23, 54, 15).toISOString(), now)).toBe('45 s ago');
    // Just now, a little before or after: neither "in 0 s" nor "0 s ago".
    expect(relative(new Date(now.getTime() - 300).toISOString(), now)).toBe('now');
    expect(relative(new Date(now.getTime() + 300).toISOString(), now)).toBe('now');
  });
});

describe('text from others, made safe to print', () => {
  it('leaves out the carriage return that ends a line (CRLF), and shows any other', () => {
    expect(neutralise('# Plan\r\n\r\n- dates\r\n')).toBe('# Plan\n\n- dates\n');
    expect(neutralise('a line cut from a CRLF text\r')).toBe('a line cut from a CRLF text');
    // One that would write over what came before it on the line is shown.
    expect(neutralise('approved\rdenied\n')).toBe('approved\\x0ddenied\n');
    expect(neutralise('\x1b[2Jclear')).toBe('\\x1b[2Jclear');
    // A message of CRLF lines, its first line in its header.
    const text = printed((out) =>
      printMessage(out, {
        senderName: 'Win',
        isOwner: false,
        type: 'text',
        content: 'first\r\nsecond\r\nthird',
        timestamp: new Date().toISOString(),
      }),
    );
    expect(text).toMatch(/ {2}Win: first\n {10}second\n {10}third\n$/);
  });
});

describe('a message printed', () => {
  it('marks the owner in words, so a participant who takes the owner’s name does not pass for them without colour', () => {
    const timestamp = new Date().toISOString();
    const text = printed((out) => {
      printMessage(out, { senderName: 'Grace', isOwner: true, type: 'text', content: 'Ship it', timestamp });
      printMessage(out, { senderName: 'Grace', isOwner: false, type: 'text', content: 'Ship it', timestamp });
    });
    const [owner, impostor] = text.trimEnd().split('\n');
    expect(owner).toMatch(/^\d\d:\d\d:\d\d {2}Grace \(owner\): Ship it$/);
    expect(impostor).toMatch(/^\d\d:\d\d:\d\d {2}Grace: Ship it$/);
  });

  it('shows the start of its id after the time, as a reply marker names a message and --reply-to takes it', () => {
    const timestamp = new Date().toISOString();
    const text = printed((out) =>
      printMessage(out, {
        id: '3751a2b4-5c6d-4e7f-8a9b-0c1d2e3f4a5b',
        senderName: 'Ada',
        isOwner: false,
        type: 'text',
        content: 'Ship it\ntoday',
        timestamp,
      }),
    );
    expect(text).toMatch(/^\d\d:\d\d:\d\d {2}3751a2b4 {2}Ada: Ship it\n {10}today\n$/);
  });

  it('shows its date when it is not of today (local time), and what a reply answers', () => {
    const now = new Date();
    const at = (daysAgo: number) =>
      new Date(now.getFullYear(), now.getMonth(), now.getDate() - daysAgo, 9, 5, 7).toISOString();
    const yesterday = new Date(at(1));
    const day = `${yesterday.getFullYear()}-${String(yesterday.getMonth() + 1).padStart(2, '0')}-${String(yesterday.getDate()).padStart(2, '0')}`;
    const base = { senderName: 'Hana Host', isOwner: true, type: 'text' as const };
    const seen = new MessagesSeen();
    seen.add({
      ...base,
      id: 'q1',
      senderName: 'Ada Lovelace',
      content: `Question ${'x'.repeat(80)}`,
      timestamp: at(1),
    });
    expect(
      printed((out) => {
        printMessage(out, { ...base, content: 'Sure', timestamp: at(1), replyTo: 'q1' }, undefined, seen);
        printMessage(
          out,
          { ...base, content: 'Later', timestamp: at(0), replyTo: '3751a2b4-0000' },
          undefined,
          seen,
        );
      }),
    ).toBe(
      `${day} 09:05  Hana Host (owner): Sure\n          ↪ in reply to Ada Lovelace: Question ${'x'.repeat(50)}…\n` +
        '09:05:07  Hana Host (owner): Later\n          ↪ in reply to message 3751a2b4\n',
    );
  });
});

describe('refused for a while (429)', () => {
  const limited = (retryAfter: string, error = 'rate limit exceeded') =>
    new RateLimitError(`429 ${error}`, {
      status: 429,
      body: { error, code: 'rate_limited' },
      headers: new Headers({ 'retry-after': retryAfter, 'api-version': '1' }),
    });

  it('says the SDK’s wait after a 429 in short, and no other line of it', async () => {
    // The line as this SDK logs it: a 429, then the answer.
    const lines: string[] = [];
    let calls = 0;
    await new Convene({
      baseUrl: 'http://convene.test',
      logLevel: 'info',
      logger: { debug() {}, info: (line) => lines.push(line), warn() {}, error() {} },
      fetch: async () =>
        ++calls === 1
          ? new Response(JSON.stringify({ error: 'rate limit exceeded', code: 'rate_limited' }), {
              status: 429,
              headers: { 'content-type': 'application/json', 'retry-after': '1' },
            })
          : new Response(JSON.stringify({ status: 'ok' }), {
              headers: { 'content-type': 'application/json' },
            }),
    }).health();
    expect(lines).toHaveLength(1);
    expect(rateLimitWait(lines[0]!)).toMatch(/^rate limit exceeded: trying again in 2 s$/);
    expect(
      rateLimitWait(
        '[convene] connect refused (health: GET http://x/api/health); retrying in 500 ms (retry 1 of 2)',
      ),
    ).toBeUndefined();
    expect(rateLimitWait('API version 1 is deprecated: upgrade @convene/sdk')).toBeUndefined();
  });

  it('exits 6 with when to try again, which limit, and that convene does not wait that long', () => {
    const budget = refusedForNow(limited('42', 'this space allows each participant 2 messages per minute'));
    expect(budget).toMatchObject({
      exitCode: 6,
      message: 'this space allows each participant 2 messages per minute',
      details: { code: 'rate_limited', retryAfter: 42 },
    });
    expect(budget.hint).toMatch(/^Try again in 42 s: the space’s owner sets this budget/);
    expect(refusedForNow(limited('30')).hint).toBe('Try again in 30 s: convene does not wait that long.');
    // Within what convene waits out (after its retries ran out): when, and nothing more.
    expect(refusedForNow(limited('2')).hint).toBe('Try again in 2 s.');
    expect(refusedForNow(limited('30'), 'not sent: rate limit exceeded').message).toBe(
      'not sent: rate limit exceeded',
    );
  });

  it('says when to try again once, in the hint: not also the SDK’s `(retry after N s)` that ends the error’s message', () => {
    const refused = refusedForNow(
      new RateLimitError('429 rate limit exceeded (retry after 42 s)', {
        status: 429,
        body: { error: 'rate limit exceeded', code: 'rate_limited' },
        headers: new Headers({ 'retry-after': '42' }),
      }),
    );
    expect(refused.message).toBe('rate limit exceeded');
    expect(refused.hint).toBe('Try again in 42 s: convene does not wait that long.');
  });
});

describe('links, names and ids', () => {
  it('finds the server an invitation link points at', () => {
    const id = '6f1c2a7e-3b4d-4e5f-8a9b-0c1d2e3f4a5b';
    expect(serverOfLink(`http://localhost:3000/join/${id}#key=inv_x`)).toBe('http://localhost:3000');
    expect(serverOfLink(`https://example.com/convene/hub/space/${id}/agent.md?key=inv_x`)).toBe(
      'https://example.com/convene',
    );
    expect(serverOfLink(id)).toBeUndefined();
    expect(serverOfLink('https://example.com/elsewhere')).toBeUndefined();
    expect(hostKey('HTTP://Example.com:80/')).toBe('http://example.com');
  });

  it('takes --url as an http or https URL, and says how to write one that lacks its scheme', () => {
    expect(normaliseUrl('http://localhost:3000/')).toBe('http://localhost:3000');
    // `localhost:3000` parses, its scheme being `localhost:`.
    expect(() => normaliseUrl('localhost:3000')).toThrow(UsageError);
    expect(() => normaliseUrl('localhost:3000')).toThrow(
      '"localhost:3000" is not an http:// or https:// URL',
    );
    expect(() => normaliseUrl('ftp://example.com')).toThrow(UsageError);
    expect(() => normaliseUrl('not a url')).toThrow('"not a url" is not a URL');
  });

  it('picks by id, name (in the case typed first, then in any case), or id prefix; two of a name ask for the id', () => {
    const items = [
      { id: 'aaaa1111-0000-0000-0000-000000000000', name: 'Ada' },
      { id: 'bbbb2222-0000-0000-0000-000000000000', name: 'Bob' },
      { id: 'cccc3333-0000-0000-0000-000000000000', name: 'bob' },
      { id: 'dddd4444-0000-0000-0000-000000000000', name: 'twin' },
      { id: 'eeee5555-0000-0000-0000-000000000000', name: 'twin' },
    ];
    const what = { noun: 'participant', id: (i: any) => i.id, name: (i: any) => i.name, listCommand: 'x' };
    expect(pick(items, 'ADA', what).id).toBe(items[0]!.id);
    expect(pick(items, 'cccc', what).name).toBe('bob');
    expect(pick(items, items[1]!.id, what).name).toBe('Bob');
    // The name as typed wins over those that match it only in another case.
    expect(pick(items, 'bob', what).id).toBe(items[2]!.id);
    expect(pick(items, 'Bob', what).id).toBe(items[1]!.id);
    expect(() => pick(items, 'BOB', what)).toThrow(/2 participants are called "BOB"/);
    // Each with its name as well as its id, as for an id start several share; their exact case
    // names each too (it is tried first).
    expect(() => pick(items, 'BOB', what)).toThrow(
      expect.objectContaining({
        hint: `Name one in its exact case, or by id: Bob (${items[1]!.id}), bob (${items[2]!.id})`,
      }),
    );
    // Of one name in one case, the id alone does.
    expect(() => pick(items, 'twin', what)).toThrow(
      expect.objectContaining({
        message: '2 participants are called "twin"',
        hint: `Name one by id: twin (${items[3]!.id}), twin (${items[4]!.id})`,
      }),
    );
    expect(() => pick(items, 'abc', what)).toThrow(/no participant "abc"/);
    // What a hint names them by: the name where it finds them alone, else the id.
    const find = (typed: string) => pick(items, typed, what);
    expect(hintName(items[1]!, what, find)).toBe('Bob');
    expect(hintName(items[3]!, what, find)).toEqual({ verbatim: items[3]!.id });
  });

  it('takes the unique start of a name where asked (participants), not otherwise (documents)', () => {
    const people = [
      { id: 'aaaa1111-0000-4000-8000-000000000000', name: 'Ada Lovelace' },
      { id: 'bbbb2222-0000-4000-8000-000000000000', name: 'Adam Smith' },
      { id: 'cccc3333-0000-4000-8000-000000000000', name: 'Hana Host' },
    ];
    const what = { noun: 'participant', id: (p: any) => p.id, name: (p: any) => p.name, listCommand: 'x' };
    const byStart = { ...what, byNameStart: true };
    expect(pick(people, 'hana', byStart).name).toBe('Hana Host');
    expect(pick(people, 'ADA L', byStart).name).toBe('Ada Lovelace');
    expect(() => pick(people, 'hana', what)).toThrow(/no participant "hana"/);
    expect(() => pick(people, 'ada', byStart)).toThrow(
      expect.objectContaining({
        exitCode: 2,
        message: '2 participants have names starting with "ada"',
        hint: `Name one: Ada Lovelace (${people[0]!.id}), Adam Smith (${people[1]!.id})`,
      }),
    );
    // A whole name is never ambiguous for being the start of another.
    const named = [...people, { id: 'dddd4444-0000-4000-8000-000000000000', name: 'Ada' }];
    expect(pick(named, 'ada', byStart).id).toBe(named[3]!.id);
    // The start of an id and of a name, of two: both named.
    const mixed = [...people, { id: 'adam0000-0000-4000-8000-000000000000', name: 'Zed' }];
    expect(() => pick(mixed, 'adam', byStart)).toThrow(
      /2 participants have names or ids starting with "adam"/,
    );
  });

  it('answers an id start that several share with a usage error naming them, not "not found"', () => {
    const items = [
      { id: 'abcd1111-0000-4000-8000-000000000000', name: 'Ada' },
      { id: 'abcd2222-0000-4000-8000-000000000000', name: 'Bob' },
      { id: 'ffff3333-0000-4000-8000-000000000000', name: 'Cy' },
    ];
    const what = { noun: 'participant', id: (i: any) => i.id, name: (i: any) => i.name, listCommand: 'x' };
    expect(() => pick(items, 'ABCD', what)).toThrow(
      expect.objectContaining({
        exitCode: 2,
        message: '2 participants have ids starting with "ABCD"',
        hint: `Name one: Ada (${items[0]!.id}), Bob (${items[1]!.id})`,
      }),
    );
    expect(pick(items, 'abcd2', what).name).toBe('Bob');
  });

  it('says an id start needs 4 characters only of what starts an id, not of a short name (Ed, Bea)', () => {
    const people = [
      { id: 'ff001111-0000-4000-8000-000000000000', name: 'Ada' },
      { id: 'ed002222-0000-4000-8000-000000000000', name: 'Bob' },
    ];
    const what = {
      noun: 'participant',
      id: (p: any) => p.id,
      name: (p: any) => p.name,
      listCommand: 'convene participants',
    };
    expect(() => pick(people, 'Bea', what)).toThrow(
      expect.objectContaining({ exitCode: 5, hint: 'See them with `convene participants`.' }),
    );
    expect(() => pick(people, 'ED', what)).toThrow(
      expect.objectContaining({ hint: expect.stringContaining('An id start needs 4 characters or more.') }),
    );
  });

  it('finds by id or its start (4 characters or more); several starting so are a usage error naming them', () => {
    const items = [
      { id: 'abcd1111-0000-4000-8000-000000000000', url: 'https://a.example/hook' },
      { id: 'abcd2222-0000-4000-8000-000000000000', url: 'https://b.example/hook' },
    ];
    const what = {
      noun: 'webhook',
      id: (w: (typeof items)[number]) => w.id,
      label: (w: (typeof items)[number]) => `${w.id} (${w.url})`,
      listCommand: 'convene webhook list',
    };
    expect(byIdStart(items, items[1]!.id, what)).toBe(items[1]);
    expect(byIdStart(items, 'ABCD2', what)).toBe(items[1]);
    let several: unknown;
    try {
      byIdStart(items, 'abcd', what);
    } catch (error) {
      several = error;
    }
    expect(several).toBeInstanceOf(UsageError);
    expect(several).toMatchObject({
      exitCode: 2,
      message: '2 webhooks have ids starting with "abcd"',
      hint: `Name one: ${items[0]!.id} (https://a.example/hook), ${items[1]!.id} (https://b.example/hook)`,
    });
    expect(() => byIdStart(items, 'ffff', what)).toThrow(
      expect.objectContaining({
        exitCode: 5,
        message: 'no webhook "ffff"',
        hint: expect.stringContaining('`convene webhook list`'),
      }),
    );
    // Three characters start too many ids to name one: a usage error, even where one matches.
    expect(() => byIdStart(items, 'abc', what)).toThrow(
      expect.objectContaining({
        exitCode: 2,
        message: '"abc" is too short to name a webhook: give its id or its first 4 characters or more',
        hint: 'See the webhooks and their ids with `convene webhook list`.',
      }),
    );
  });

  it('finds a name typed in another Unicode normal form (NFD, as macOS gives it), in any case', () => {
    const nfc = 'Équipe 🚀 日本';
    const nfd = nfc.normalize('NFD');
    expect(nfd).not.toBe(nfc);
    const items = [{ id: 'c383248e-2cee-4d3e-b54d-b2ed0d95394a', name: nfc }];
    const what = { noun: 'space', id: (i: { id: string }) => i.id, name: (i: { name: string }) => i.name };
    expect(find(items, nfd, what)).toBe(items[0]);
    expect(find(items, nfd.toLowerCase(), what)).toBe(items[0]);
    expect(find(items, 'équ'.normalize('NFD'), { ...what, byNameStart: true })).toBe(items[0]);
    expect(closest('Equipe 🚀 日'.normalize('NFD'), [nfc])).toBe(nfc);
  });

  it('suggests the name a typo most likely meant', () => {
    const names = ['plan.md', 'notes.md', 'Release plan', 'Ada'];
    expect(closest('plna.md', names)).toBe('plan.md');
    expect(closest('relese plan', names)).toBe('Release plan');
    expect(closest('ad', names)).toBe('Ada');
    expect(closest('budget.md', names)).toBeUndefined();
    // The start of a name, typed without the rest (a document's extension, a space's last words).
    expect(closest('plan', names)).toBe('plan.md');
    expect(closest('release', names)).toBe('Release plan');
    // Even when another name is fewer edits away: `hist` means history, not list.
    expect(closest('hist', ['list', 'history'])).toBe('history');
    // Too short to mean one, or the start of two: nothing guessed.
    expect(closest('no', ['notes.md', 'nothing.md'])).toBeUndefined();
    expect(closest('plan', ['plan.md', 'plan-b.md'])).toBeUndefined();
    // A typo in the start of a longer name: its first word misspelt, a letter left out or added.
    expect(closest('relase', names)).toBe('Release plan');
    expect(closest('lanch', ['Launch plan', 'Budget'])).toBe('Launch plan');
    expect(closest('notse', names)).toBe('notes.md');
    // A start a typo away from two names: nothing guessed.
    expect(closest('relase', ['Release plan', 'Release notes'])).toBeUndefined();
    // Nor for a short word one letter from the start of a longer name.
    const spaces = ['Design review', 'Hermes bot', 'Shop redesign', 'Ada Lovelace'];
    for (const word of ['desk', 'here', 'ship', 'adaa', 'hello', 'shipped'])
      expect(closest(word, spaces)).toBeUndefined();
    const what = {
      noun: 'document',
      id: (n: string) => n,
      name: (n: string) => n,
      listCommand: 'convene artifact list',
    };
    expect(() => pick(names, 'note.md', what)).toThrow(
      expect.objectContaining({ hint: 'Did you mean "notes.md"? See them with `convene artifact list`.' }),
    );
  });

  it('names, by a whole name, that participant wherever they stand before any name start (kick, mute, --mention)', () => {
    const bob = {
      participantId: 'b0b00000-0000-4000-8000-000000000001',
      name: 'Bob',
      status: 'kicked',
      isOwner: false,
    };
    const bobby = {
      participantId: 'b0b00000-0000-4000-8000-000000000002',
      name: 'Bobby',
      status: 'active',
      isOwner: false,
    };
    const ada = {
      participantId: 'ada00000-0000-4000-8000-000000000003',
      name: 'Ada Lovelace',
      status: 'muted',
      isOwner: false,
    };
    const people = [bob, bobby, ada];
    const can = (...statuses: string[]) => people.filter((p) => statuses.includes(p.status));
    // kick: Bob was kicked already (said so, nothing done), never Bobby.
    expect(moderated(people, can('active', 'muted', 'waitingForApproval'), 'bob', 'x')).toBe(bob);
    expect(moderated(people, can('active', 'muted', 'waitingForApproval'), 'BOB', 'x')).toBe(bob);
    expect(moderated(people, can('active'), 'bob', 'x')).toBe(bob);
    expect(moderated(people, can('muted'), 'bob', 'x')).toBe(bob);
    // No one is called so: the start of a name, as before.
    expect(moderated(people, can('active', 'muted'), 'bobb', 'x')).toBe(bobby);
    expect(moderated(people, can('active'), 'ada', 'x')).toBe(ada);
    // Two of a name: the one the verb applies to, else the one still in the space.
    const back = { ...bob, participantId: 'b0b00000-0000-4000-8000-000000000004', status: 'active' };
    const again = [bob, back, bobby];
    expect(
      moderated(
        again,
        again.filter((p) => p.status === 'active'),
        'bob',
        'x',
      ),
    ).toBe(back);
    expect(moderated(again, [], 'bob', 'x')).toBe(back);

    // --mention bob: Bob is gone, so nobody (not Bobby); bobb is Bobby.
    expect(() => mentionedId(people, 'bob', 'convene participants')).toThrow(
      expect.objectContaining({
        exitCode: 5,
        message: 'nobody called "bob" is in this space',
        hint: expect.stringContaining('Bob’s status is kicked'),
      }),
    );
    expect(mentionedId(people, 'bobb', 'x')).toBe(bobby.participantId);
    expect(mentionedId(people, 'ada', 'x')).toBe(ada.participantId);
    expect(mentionedId(again, 'bob', 'x')).toBe(back.participantId);
  });

  it('does not call @Ada a stray when --mention mentioned Ada Lovelace', () => {
    const people = [
      { participantId: 'ada00000-0000-4000-8000-000000000003', name: 'Ada Lovelace', status: 'active' },
      { participantId: 'b0b00000-0000-4000-8000-000000000002', name: 'Bobby', status: 'active' },
    ];
    expect(strayMentions('@Ada can you look?', people, [people[0]!.participantId])).toEqual([]);
    expect(strayMentions('@Ada can you look?', people, [])).toEqual([
      { word: 'Ada', near: ['Ada Lovelace'] },
    ]);
    // Bobby was not mentioned: @Bob still is a stray.
    expect(strayMentions('@Ada and @Bob', people, [people[0]!.participantId])).toEqual([
      { word: 'Bob', near: ['Bobby'] },
    ]);
    // Package scopes and paths call nobody.
    expect(strayMentions('see @types/node and npm i @clack/prompts, @Bobb', people, [])).toEqual([
      { word: 'Bobb', near: ['Bobby'] },
    ]);
  });

  it('reads an @Name typed decomposed (NFD) as the server does, composed', () => {
    const zoe = { participantId: '20e00000-0000-4000-8000-000000000001', name: 'Zoë', status: 'active' };
    const decomposed = 'hi @Zoe\u0308, welcome';
    // Mentioned by the server: no warning.
    expect(strayMentions(decomposed, [zoe], [zoe.participantId])).toEqual([]);
    // Not mentioned (she left meanwhile): the name it meant, not a suggestion of what was typed.
    expect(strayMentions('@Zoe\u0308x', [zoe], [])).toEqual([{ word: 'Zoe\u0308x', near: ['Zoë'] }]);
  });

  it('knows a refused join by its code, or by its words from a server older than codes', () => {
    const answer = (error: string, code?: string) => ({
      status: 404,
      body: { error, ...(code ? { code } : {}) },
      headers: new Headers(),
    });
    const refused = 'join request refused: the owner turned it down';
    expect(isJoinRefused(new NotFoundError(`404 ${refused}`, answer(refused, 'join_refused')))).toBe(true);
    expect(isJoinRefused(new NotFoundError(`404 ${refused}`, answer(refused)))).toBe(true);
    expect(isJoinRefused(new NotFoundError('404 space not found', answer('space not found')))).toBe(false);
    expect(isJoinRefused(new Error(refused))).toBe(false);
  });

  it('asks who created a document only when cheap: once each, at most 3 a minute', async () => {
    let now = 0;
    const asked: string[] = [];
    const lookup = async (id: string) => {
      asked.push(id);
      now += 300; // each lookup takes 0.3 s
      return `creator of ${id}`;
    };
    const creators = new Creators(lookup, { perMinute: 3, timeoutMs: 2000, now: () => now });
    // A burst: the first three are asked, the rest printed without "by NAME".
    expect(await creators.of('a')).toBe('creator of a');
    expect(await creators.of('b')).toBe('creator of b');
    expect(await creators.of('c')).toBe('creator of c');
    expect(await creators.of('d')).toBeUndefined();
    expect(await creators.of('a')).toBe('creator of a'); // kept, not asked again
    // One is earned back every 20 s.
    now += 20_000;
    expect(await creators.of('e')).toBe('creator of e');
    expect(await creators.of('f')).toBeUndefined();
    expect(asked).toEqual(['a', 'b', 'c', 'e']);
  });

  it('makes a safe file name of a document name', () => {
    expect(safeFileName('plan.md')).toBe('plan.md');
    expect(safeFileName('Release plan / 2.0')).toBe('Release-plan-2.0.md');
    expect(safeFileName('../../etc/passwd')).toBe('etc-passwd.md');
    expect(safeFileName('***')).toBe('document.md');
  });
});

describe('names quoted for the shell in hints', () => {
  const names = [
    'plan.md',
    "Ada's notes",
    'costs $HOME `id` "x" \\ !!',
    'plan\nv2.md',
    'tab\there',
    'esc\u001b[2Jhidden',
    'rtl\u202eevil.md',
    "both ' and \n and ! and \\",
    'octal\u001b7 after',
    'ümlaut und 日本',
  ];
  /** What a shell makes of `printf %s WORD`: the word as the command gets it. */
  const read = (shell: string, word: string) =>
    execFileSync(shell, ['-c', `printf %s ${word}`], { encoding: 'utf8' });
  const has = (shell: string) => {
    try {
      execFileSync(shell, ['-c', 'true']);
      return true;
    } catch {
      return false;
    }
  };

  it('gives one word of one printable line that bash and zsh read back as the name', () => {
    for (const name of names) {
      const word = quoted(name);
      // Nothing a terminal acts on, nothing that breaks the line when it is printed.
      expect(word).toMatch(/^[\x20-\x7e\u00a0-\uffff]+$/);
      expect(word).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/);
      for (const shell of ['bash', 'zsh'].filter(has))
        expect({ shell, read: read(shell, word) }).toEqual({ shell, read: name });
    }
    expect(quoted('plan\nv2.md')).toBe("$'plan\\nv2.md'");
    expect(quoted('plan.md')).toBe('"plan.md"');
    expect(quoted('a $b')).toBe("'a $b'");
    // A backquote would end the backquoted command line of the hint it is in.
    expect(quoted('run `id`')).toBe("$'run \\140id\\140'");
  });

  it('keeps names without control characters in quotes any POSIX shell (sh) reads; plain words bare', () => {
    for (const name of names.filter((n) => !quoted(n).startsWith("$'")))
      expect(read('sh', quoted(name))).toBe(name);
    expect(shellWord('/home/ada/.config/convene/credentials.json')).toBe(
      '/home/ada/.config/convene/credentials.json',
    );
    expect(shellWord('ada@example.com')).toBe('ada@example.com');
    expect(shellWord('/Users/Ada Lovelace/x')).toBe('"/Users/Ada Lovelace/x"');
    expect(read('sh', shellWord('/Users/Ada Lovelace/x'))).toBe('/Users/Ada Lovelace/x');
  });
});

describe('command lines hints suggest', () => {
  it('put arguments that start with "-" after --, and the options before it', () => {
    expect(commandLine('artifact edit', { args: ['plan.md'] })).toBe('convene artifact edit "plan.md"');
    expect(commandLine('artifact edit', { args: ['-draft.md'] })).toBe(
      'convene artifact edit -- "-draft.md"',
    );
    const parts = { options: { '--file': verbatim('F'), '--base-version': verbatim(3) } };
    expect(commandLine('artifact write', { args: ['plan.md'], ...parts })).toBe(
      'convene artifact write "plan.md" --file F --base-version 3',
    );
    expect(commandLine('artifact write', { args: ['-draft.md'], ...parts })).toBe(
      'convene artifact write --file F --base-version 3 -- "-draft.md"',
    );
    // Words of ours as they are; an option's value that starts with "-" is taken as its value.
    expect(commandLine('artifact diff', { args: [verbatim('ARTIFACT'), verbatim(1)] })).toBe(
      'convene artifact diff ARTIFACT 1',
    );
    expect(commandLine('messages', { options: { '--space': '-x', '--json': true } })).toBe(
      'convene messages --space "-x" --json',
    );
  });
});

describe('a server that does not answer', () => {
  it('says how to start one on this machine, on its port, or to check a remote address', () => {
    expect(unreachableHint('http://localhost:3000', false)).toBe(
      'No server answers there. Start one in another terminal with `convene serve`, or point at another with --url or CONVENE_URL.',
    );
    expect(unreachableHint('http://127.0.0.1:8080', true)).toBe(
      'No server answers there. Start one in another terminal with `convene serve --port 8080`.',
    );
    expect(unreachableHint('https://convene.example.com', true)).toMatch(/^Check the address/);
    // With spaces of it saved here: no line to paste anywhere, which would start a new, empty
    // server wherever it is typed, but the server on its own data.
    const own = unreachableHint('http://127.0.0.1:4301', true, { keysHere: true });
    // Where its data is, convene cannot know (DATA_DIR, --data-dir, --database-url): not said as a fact.
    expect(own).toBe(
      'No server answers there. Start the server that keeps your spaces again, on its own data: convene serve --port 4301 as it was started, with its data (./.data in the directory it was started from, unless it was given --data-dir, DATA_DIR, --database-url or DATABASE_URL, which it needs again). Started on other data, it would be a new server, without your spaces.',
    );
    expect(own).not.toContain('its data is in .data there');
    // No --url given: the other way out, a sentence of its own (it ended the data's sentence).
    expect(unreachableHint('http://127.0.0.1:4301', false, { keysHere: true })).toMatch(
      /which it needs again\)\. Started on other data, it would be a new server, without your spaces\. Or point at another with --url or CONVENE_URL\.$/,
    );
  });

  it('tells a refused connection (nothing listens) from one something listening reset, closed or answered in another protocol', () => {
    const failed = (message: string, code: string) =>
      new ConnectionError(`${message} (health: GET http://127.0.0.1:4301/api/health)`, { code });
    const refused = unreachableHint('http://127.0.0.1:4301', true, {
      error: failed('connect ECONNREFUSED 127.0.0.1:4301', 'ECONNREFUSED'),
    });
    expect(refused).toBe(
      'No server answers there. Start one in another terminal with `convene serve --port 4301`.',
    );
    for (const [error, said] of [
      [failed('connect ECONNRESET 127.0.0.1:4301', 'ECONNRESET'), 'closed the connection without answering'],
      [failed('other side closed', 'UND_ERR_SOCKET'), 'closed the connection without answering'],
      [
        failed('Response does not match the HTTP/1.1 protocol (Expected HTTP/)', 'HPE_INVALID_CONSTANT'),
        'answers, but not in HTTP',
      ],
    ] as const) {
      expect(connectionState(error)).toBe(said);
      for (const fromDoctor of [false, true]) {
        const hint = unreachableHint('http://127.0.0.1:4301', true, { error, fromDoctor, keysHere: true });
        // Something is there: a server to start would find the port taken.
        expect(hint).not.toContain('convene serve');
        expect(hint).toMatch(
          /^Something on port 4301 (closed the connection without answering|answers, but not in HTTP): /,
        );
        expect(hint).toContain('not a Convene server');
        expect(hint).toContain('Check the address (--url or CONVENE_URL)');
        expect(hint.includes('`convene doctor`')).toBe(!fromDoctor);
      }
    }
    expect(connectionState(failed('connect ECONNREFUSED 127.0.0.1:4301', 'ECONNREFUSED'))).toBe(
      'does not answer',
    );
  });

  it('says of an https:// address answered in plain HTTP that it is, and the http:// address to use', () => {
    const tls = new ConnectionError(
      '80CCEDF3577F0000:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:../deps/openssl/openssl/ssl/record/ssl3_record.c:350:\n (health: GET https://localhost:4301/api/health)',
      { code: 'ERR_SSL_WRONG_VERSION_NUMBER' },
    );
    expect(speaksPlainHttp(tls, 'https://localhost:4301')).toBe(true);
    expect(speaksPlainHttp(tls, 'http://localhost:4301')).toBe(false);
    const refused = new ConnectionError('connect ECONNREFUSED', { code: 'ECONNREFUSED' });
    expect(speaksPlainHttp(refused, 'https://localhost:4301')).toBe(false);
    expect(plainHttp('https://localhost:4301')).toMatchObject({
      message: 'https://localhost:4301 answers in plain HTTP, not HTTPS: the TLS handshake failed',
      hint: 'Use http://localhost:4301 instead (--url or CONVENE_URL).',
    });
  });

  it('does not say to start a server where something took the connection and never answered', () => {
    const silent = new TimeoutError(
      'no answer within 5000 ms (health: GET http://localhost:4823/api/health)',
      {
        operation: 'health',
        method: 'GET',
        url: 'http://localhost:4823/api/health',
        mayHaveRun: true,
      },
    );
    const hint = unreachableHint('http://localhost:4823', true, { error: silent });
    expect(hint).toMatch(/^Something at that address took the connection but did not answer in time/);
    expect(hint).not.toContain('convene serve');
  });

  it('says, while a wait goes on, whether the server is silent or answers an error', () => {
    const said: string[] = [];
    const spinner = { message: (text: string) => said.push(text), stop() {}, fail() {} };
    const hooks = sayOutages(spinner, 'http://localhost:3000', 'Waiting for the owner to approve you', 2000);
    const refused = new ConnectionError('connect ECONNREFUSED 127.0.0.1:3000 (…)', { code: 'ECONNREFUSED' });
    hooks.onDisconnect?.({ error: refused, attempt: 1, delayMs: 2000 });
    hooks.onDisconnect?.({ error: refused, attempt: 2, delayMs: 2000 });
    hooks.onReconnect?.({ attempts: 2 });
    const unavailable = new ServiceUnavailableError('503 database unavailable', { status: 503 });
    hooks.onDisconnect?.({ error: unavailable, attempt: 1, delayMs: 2000 });
    hooks.onDisconnect?.({
      error: new TimeoutError('no answer within 60000 ms (…)'),
      attempt: 1,
      delayMs: 2000,
    });
    expect(said).toEqual([
      'http://localhost:3000 does not answer (ECONNREFUSED); still waiting, trying again every 2 s',
      'Reconnected; waiting for the owner to approve you',
      'http://localhost:3000 answers 503 database unavailable; still waiting, trying again every 2 s',
      'http://localhost:3000 does not answer (timed out); still waiting, trying again every 2 s',
    ]);
  });
});

describe('a followed server that stays away', () => {
  it('is said once, again after 30 s with why and how to get it back, then every minute', () => {
    let clock = 0;
    const hint = (error: ConveneError) => `hint for ${error.code}`;
    const lines = printed((out) => {
      const hooks = sayConnectionLost(out, { server: 'http://localhost:3000', hint, now: () => clock });
      const cut = new ConnectionError('the stream was cut: other side closed', {});
      const refused = new ConnectionError('connect ECONNREFUSED 127.0.0.1:3000 (…)', {
        code: 'ECONNREFUSED',
      });
      hooks.onDisconnect?.({ error: cut, attempt: 1, delayMs: 1000 });
      for (let attempt = 2; clock < 150_000; attempt++) {
        clock += 5_000;
        hooks.onDisconnect?.({ error: refused, attempt, delayMs: 5000 });
      }
      hooks.onReconnect?.({ attempts: 31 });
      // A server that answers 503 is said as such, without how to start one, nor the SDK's
      // `(retry after 1 s)` beside the line's own reconnecting.
      clock = 0;
      const unavailable = new ServiceUnavailableError('503 database unavailable (retry after 1 s)', {
        status: 503,
      });
      hooks.onDisconnect?.({ error: unavailable, attempt: 1, delayMs: 1000 });
      clock = 31_000;
      hooks.onDisconnect?.({ error: unavailable, attempt: 2, delayMs: 1000 });
    }).split('\n');
    expect(lines).toEqual([
      'Connection lost (the stream was cut: other side closed), reconnecting…',
      'Still reconnecting after 30 s (ECONNREFUSED)…',
      'hint for ECONNREFUSED',
      'Still reconnecting after 90 s (ECONNREFUSED)…',
      'hint for ECONNREFUSED',
      'Still reconnecting after 150 s (ECONNREFUSED)…',
      'hint for ECONNREFUSED',
      'Reconnected',
      'Connection lost (503 database unavailable), reconnecting…',
      'Still reconnecting after 31 s (503 database unavailable)…',
      '',
    ]);
  });
});

describe('a followed server that does not answer when the command starts', () => {
  it('is waited for in those words, with the hint at once, said again after 30 s; then Connected, not Reconnected', () => {
    let clock = 0;
    const hint = (error: ConveneError) => `hint for ${error.code}`;
    const lines = printed((out) => {
      const hooks = sayConnectionLost(out, { server: 'http://localhost:3000', hint, now: () => clock });
      const refused = new ConnectionError('connect ECONNREFUSED 127.0.0.1:3000 (…)', {
        code: 'ECONNREFUSED',
      });
      for (let attempt = 1; clock <= 32_000; attempt++, clock += 2_000) hooks.notYet(refused, attempt);
      hooks.onReconnect?.({ attempts: 17 });
      // A later loss is a loss: said as one.
      hooks.onDisconnect?.({ error: refused, attempt: 1, delayMs: 1000 });
      hooks.onReconnect?.({ attempts: 1 });
    }).split('\n');
    expect(lines).toEqual([
      'Waiting for http://localhost:3000 (ECONNREFUSED)…',
      'hint for ECONNREFUSED',
      'Still waiting for http://localhost:3000 after 30 s (ECONNREFUSED)…',
      'hint for ECONNREFUSED',
      'Connected',
      'Connection lost (ECONNREFUSED), reconnecting…',
      'Reconnected',
      '',
    ]);
  });
});

describe('a followed server that goes away, with --json', () => {
  it('is said on stderr as {"warning": …} lines, without colours or the hint, and nothing on stdout', () => {
    const written = { stdout: '', stderr: '' };
    const stream = (name: 'stdout' | 'stderr') =>
      ({
        write: (chunk: string) => {
          written[name] += chunk;
          return true;
        },
      }) as unknown as NodeJS.WritableStream;
    // Colours on (a terminal): they must not leak into the JSON strings.
    const out = new Output(
      { json: true, quiet: false, color: true, spin: false, interactive: false },
      stream('stdout'),
      stream('stderr'),
    );
    let clock = 0;
    const hooks = sayConnectionLost(out, {
      server: 'http://localhost:3000',
      hint: () => 'convene serve --port 3000',
      now: () => clock,
    });
    const refused = new ConnectionError('connect ECONNREFUSED 127.0.0.1:3000 (…)', { code: 'ECONNREFUSED' });
    hooks.onDisconnect?.({ error: refused, attempt: 1, delayMs: 1000 });
    clock = 31_000;
    hooks.onDisconnect?.({ error: refused, attempt: 2, delayMs: 1000 });
    hooks.onReconnect?.({ attempts: 2 });
    expect(written.stdout).toBe('');
    expect(written.stderr).toBe(
      '{"warning":"Connection lost (ECONNREFUSED), reconnecting…"}\n' +
        '{"warning":"Still reconnecting after 31 s (ECONNREFUSED)…"}\n' +
        '{"warning":"Reconnected"}\n',
    );
  });
});

describe('prompt styles without colour', () => {
  it('takes out colours, dim and strikethrough, and keeps inverse and hidden (the cursor)', () => {
    expect(withoutStyles('\x1b[36m│\x1b[39m  \x1b[2;9mabc\x1b[22m\x1b[29m')).toBe('│  abc');
    expect(withoutStyles('\x1b[7m\x1b[8m_\x1b[28m\x1b[27m')).toBe('\x1b[7m\x1b[8m_\x1b[28m\x1b[27m');
    expect(withoutStyles('\x1b[2;7mx\x1b[1A\x1b[2K')).toBe('\x1b[7mx\x1b[1A\x1b[2K');
  });
});

describe('tables', () => {
  it('line up columns by terminal width: wide characters take two columns, emoji too', () => {
    const table = printed((out) =>
      out.table(
        [
          { name: '日本語の名前', role: 'a' },
          { name: 'Ada', role: 'b' },
          { name: '🎉', role: 'c' },
          { name: 'e\u0301', role: 'd' },
        ],
        [
          { header: 'name', value: (row) => row.name },
          { header: 'role', value: (row) => row.role },
        ],
        'none',
      ),
    );
    expect(table.split('\n')).toEqual([
      'NAME          ROLE',
      '日本語の名前  a',
      'Ada           b',
      '🎉            c',
      'e\u0301             d',
      '',
    ]);
  });
});

describe('tables fitted to a terminal', () => {
  const fitted = (stream: { isTTY?: boolean; columns?: number }) =>
    printed(
      (out) =>
        out.table(
          [
            {
              name: 'a'.repeat(50),
              id: '3f2e0000-1111-4222-8333-444455556666',
              role: 'reviewer of everything',
            },
            { name: '日本語の名前', id: '3f2e0000-1111-4222-8333-777788889999', role: 'b' },
          ],
          [
            { header: 'name', value: (row) => row.name },
            { header: 'id', value: (row) => row.id, whole: true },
            { header: 'role', value: (row) => row.role },
          ],
          'none',
        ),
      stream,
    )
      .split('\n')
      .slice(0, -1);

  it('cuts the widest columns on a terminal, never a whole one; piped, nothing is cut', () => {
    expect(fitted({ isTTY: true, columns: 70 })).toEqual([
      'NAME             ID                                    ROLE',
      'aaaaaaaaaaaaaa…  3f2e0000-1111-4222-8333-444455556666  reviewer of ev…',
      '日本語の名前     3f2e0000-1111-4222-8333-777788889999  b',
    ]);
    for (const line of fitted({ isTTY: true, columns: 70 }))
      expect(stringWidth(line)).toBeLessThanOrEqual(70);
    // No room even at the least widths: cut as far as they go, then left to wrap.
    expect(fitted({ isTTY: true, columns: 20 })[1]).toBe(
      'aaaaaaa…  3f2e0000-1111-4222-8333-444455556666  reviewe…',
    );
    // A terminal that reports 0 columns is 80 wide; a pipe is not cut.
    expect(fitted({ isTTY: true, columns: 0 })[1]).toContain('…');
    expect(fitted({ isTTY: false, columns: 70 })[1]).toContain(`${'a'.repeat(50)}  3f2e`);
    expect(fitted({})[1]).toContain('reviewer of everything');
  });

  it('keeps a mark after a cut value (" (you)") and a whole column (a status as the API words it)', () => {
    const rows = [
      { name: 'Grace Hopper', you: true, status: 'active', role: 'owner of the plan' },
      { name: 'Ada Lovelace', you: false, status: 'waitingForApproval', role: 'reviewer' },
    ];
    const table = printed(
      (out) =>
        out.table(
          rows,
          [
            { header: 'name', value: (row) => row.name, mark: (row) => (row.you ? ' (you)' : undefined) },
            { header: 'status', value: (row) => row.status, whole: true },
            { header: 'role', value: (row) => row.role },
          ],
          'none',
        ),
      { isTTY: true, columns: 44 },
    ).split('\n');
    expect(table.slice(0, -1)).toEqual([
      'NAME         STATUS              ROLE',
      'Grac… (you)  active              owner of t…',
      'Ada Lovela…  waitingForApproval  reviewer',
    ]);
  });

  it('shortens ids to the start that tells the rows apart (8 at least) where cutting the rest is not enough', () => {
    const rows = [
      {
        name: 'Grace Hopper',
        id: '3f2e9a10-1111-4222-8333-444455556666',
        kind: 'owner, human',
        role: 'owner',
      },
      {
        name: 'Ada Lovelace the reviewer',
        id: '8c1d2e3f-1111-4222-8333-777788889999',
        kind: 'agent',
        role: 'reviewer of everything',
      },
      { name: 'Bob', id: '8c1d2e3f-a111-4222-8333-000000000000', kind: 'agent', role: 'r' },
    ];
    const table = (columns: number | undefined) =>
      printed(
        (out) =>
          out.table(
            rows,
            [
              { header: 'name', value: (row) => row.name },
              { header: 'id', value: (row) => row.id, id: true },
              { header: 'kind', value: (row) => row.kind },
              { header: 'role', value: (row) => row.role },
            ],
            'none',
          ),
        columns === undefined ? {} : { isTTY: true, columns },
      )
        .split('\n')
        .slice(0, -1);
    // Wide enough with the values cut: the ids whole.
    expect(table(76)[1]).toContain('  3f2e9a10-1111-4222-8333-444455556666  ');
    // Not: the ids shortened, two of them sharing 8 characters, so to 10 (the start commands take).
    for (const columns of [60, 50, 40]) {
      const lines = table(columns);
      for (const line of lines) expect(stringWidth(line), line).toBeLessThanOrEqual(columns);
      expect(lines.map((line) => line.split(/ {2,}/)[1])).toEqual([
        'ID',
        '3f2e9a10-1',
        '8c1d2e3f-1',
        '8c1d2e3f-a',
      ]);
    }
    expect(table(60)).toEqual([
      'NAME              ID          KIND          ROLE',
      'Grace Hopper      3f2e9a10-1  owner, human  owner',
      'Ada Lovelace th…  8c1d2e3f-1  agent         reviewer of eve…',
      'Bob               8c1d2e3f-a  agent         r',
    ]);
    // Narrower than the values at 8 columns: cut down to their header's width.
    expect(table(36)).toEqual([
      'NAME    ID          KIND     ROLE',
      'Grace…  3f2e9a10-1  owner,…  owner',
      'Ada L…  8c1d2e3f-1  agent    review…',
      'Bob     8c1d2e3f-a  agent    r',
    ]);
    // Piped: every value whole.
    expect(table(undefined)[2]).toBe(
      'Ada Lovelace the reviewer  8c1d2e3f-1111-4222-8333-777788889999  agent         reviewer of everything',
    );
  });

  it('fits headerless columns (space show) to the terminal too, by the same rules; piped, whole', () => {
    const people = (stream: { isTTY?: boolean; columns?: number }) =>
      printed(
        (out) =>
          out.columns(
            [
              [{ value: 'Owner', mark: ' (you)' }, 'owner, agent', 'active'],
              [
                { value: 'Dr. Bartholomew Montgomery-Featherstonehaugh III', mark: '' },
                'agent',
                'waitingForApproval',
              ],
            ],
            { indent: '  ', whole: [2] },
          ),
        stream,
      ).split('\n');
    const narrow = people({ isTTY: true, columns: 50 });
    for (const line of narrow) expect(stringWidth(line)).toBeLessThanOrEqual(50);
    expect(narrow[0]).toMatch(/^ {2}Owner \(you\) +owner, agent +active$/);
    expect(narrow[1]).toMatch(/^ {2}Dr\. Bartholom… +agent +waitingForApproval$/);
    // Narrower still: the mark stays after what is left of the name.
    expect(people({ isTTY: true, columns: 30 })[0]).toMatch(/^ {2}Own… \(you\) +owner, … +active$/);
    expect(people({})[1]).toContain('Montgomery-Featherstonehaugh III  agent');
  });
});

describe('output mode', () => {
  const tty = { stdin: { isTTY: true }, stdout: { isTTY: true }, stderr: { isTTY: true } };
  const piped = { stdin: { isTTY: false }, stdout: { isTTY: false }, stderr: { isTTY: false } };
  it('is rich only at a terminal without NO_COLOR, CI or AI_AGENT', () => {
    expect(detectMode({}, {}, tty)).toEqual({
      json: false,
      quiet: false,
      color: true,
      colorStderr: true,
      spin: true,
      interactive: true,
    });
    expect(detectMode({}, {}, piped)).toMatchObject({ color: false, spin: false, interactive: false });
    expect(detectMode({}, { NO_COLOR: '1' }, tty)).toMatchObject({
      color: false,
      spin: false,
      interactive: true,
    });
    expect(detectMode({}, { CI: 'true' }, tty)).toMatchObject({
      color: false,
      spin: false,
      interactive: false,
    });
    expect(detectMode({}, { AI_AGENT: 'claude' }, tty)).toMatchObject({ color: false, interactive: false });
    // Off as CI tools read it; NO_COLOR on whatever its value, but empty.
    for (const CI of ['', '0', 'false', 'FALSE'])
      expect(detectMode({}, { CI }, tty), CI).toMatchObject({ color: true, interactive: true });
    for (const NO_COLOR of ['0', 'false'])
      expect(detectMode({}, { NO_COLOR }, tty), NO_COLOR).toMatchObject({ color: false, interactive: true });
    expect(detectMode({}, { NO_COLOR: '' }, tty).color).toBe(true);
    expect(detectMode({}, { FORCE_COLOR: 'false' }, piped).color).toBe(false);
    expect(detectMode({ json: true }, {}, tty)).toMatchObject({ json: true, spin: false });
    expect(detectMode({ color: false }, { FORCE_COLOR: '1' }, piped).color).toBe(false);
    expect(detectMode({}, { FORCE_COLOR: '1' }, piped).color).toBe(true);
  });

  it('writes no colour into a stderr redirected to a file while stdout is a terminal (`2>log`)', () => {
    const redirected = { ...tty, stderr: { isTTY: false } };
    expect(detectMode({}, {}, redirected)).toMatchObject({ color: true, colorStderr: false });
    expect(detectMode({}, { FORCE_COLOR: '1' }, redirected).colorStderr).toBe(true);
    const written = (mode: ReturnType<typeof detectMode>) => {
      let stdout = '';
      let stderr = '';
      const out = new Output(
        mode,
        {
          write: (text: string) => {
            stdout += text;
            return true;
          },
        } as never,
        {
          write: (text: string) => {
            stderr += text;
            return true;
          },
        } as never,
      );
      out.success(`Sent to ${out.c.bold('Plan \u001b[31mred')}`);
      out.line(out.c.bold('table'));
      return { stdout, stderr };
    };
    const plain = written(detectMode({}, {}, redirected));
    // A quoted escape stays neutralised (shown, not acted on); the CLI's own colours are gone.
    expect(plain.stderr).toBe('✓ Sent to Plan \\x1b[31mred\n');
    expect(plain.stdout).toBe('\u001b[1mtable\u001b[22m\n');
    expect(written(detectMode({}, {}, tty)).stderr).toBe(
      '\u001b[32m✓\u001b[39m Sent to \u001b[1mPlan \\x1b[31mred\u001b[22m\n',
    );
  });
});

describe('credential store', () => {
  it('refuses at once a directory that cannot be made, where Node’s recursive mkdir spins for ever', () => {
    // XDG_CONFIG_HOME=/proc/nope: mkdir says ENOENT of a directory whose parent exists.
    if (existsSync('/proc/self')) {
      const store = new CredentialStore('/proc/nope/convene');
      expect(() => store.updateHost('http://localhost:3000', () => {})).toThrow(/ENOENT/);
    }
    const root = tempDir();
    makeDirectories(join(root, 'a/b'), 0o700);
    expect(statSync(join(root, 'a/b')).isDirectory()).toBe(true);
  });

  it('writes 0600 in a 0700 directory, and refuses to overwrite a file it cannot read', () => {
    const dir = join(tempDir(), 'convene');
    const store = new CredentialStore(dir);
    store.updateHost('http://localhost:3000/', (host) => {
      host.userToken = 'usr_x';
    });
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(store.file).mode & 0o777).toBe(0o600);
    expect(store.host('http://localhost:3000').userToken).toBe('usr_x');
    writeFileSync(store.file, '{ not json');
    expect(() => store.update(() => {})).toThrow(/not a credentials file/);
    expect(readFileSync(store.file, 'utf8')).toBe('{ not json');
  });

  it('never writes an entry it could not read back: nothing is saved then', () => {
    const store = new CredentialStore(join(tempDir(), 'convene'));
    store.updateHost('http://localhost:3000', (host) => {
      host.userToken = 'usr_x';
    });
    const before = readFileSync(store.file, 'utf8');
    // What convene 0.1.0 saved of a `200 {}`: a space without its id, key or participant.
    expect(() =>
      store.updateHost('http://localhost:3953', (host) => {
        host.spaces.undefined = { name: 'oops', role: 'owner', savedAt: '' } as never;
      }),
    ).toThrow(/would have held an entry it cannot read/);
    expect(readFileSync(store.file, 'utf8')).toBe(before);
  });

  it('loses no key when many processes save at once', async () => {
    const dir = join(tempDir(), 'convene');
    const script = `
      import { CredentialStore } from ${JSON.stringify(join(import.meta.dirname, '../src/lib/store.ts'))};
      const store = new CredentialStore(process.argv[1]);
      for (let i = 0; i < 10; i++) store.updateHost('http://h', (host) => {
        host.spaces[process.argv[2] + '-' + i] = { spaceId: 'x', name: 'x', role: 'owner', key: 'k', participantId: 'p', savedAt: '' };
      });`;
    const tsx = join(import.meta.dirname, '../node_modules/.bin/tsx');
    await Promise.all(
      Array.from(
        { length: 6 },
        (_, n) =>
          new Promise<void>((resolve, reject) => {
            const child = spawn(tsx, ['--eval', script, dir, String(n)], { stdio: 'inherit' });
            child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`exit ${code}`))));
          }),
      ),
    );
    expect(Object.keys(new CredentialStore(dir).host('http://h').spaces)).toHaveLength(60);
  }, 60_000);
});

describe('runEditor', () => {
  // Ctrl-C reaches the editor and convene together; the editor's end may be seen first.
  it.skipIf(process.platform === 'win32')(
    'tells an editor ended by Ctrl-C from one that failed',
    async () => {
      const file = join(tempDir(), 'doc.md');
      writeFileSync(file, 'text');
      expect(await runEditor('kill -INT $$ #', file)).toMatchObject({ ok: false, interrupted: true });
      expect(await runEditor('exit 130 #', file)).toMatchObject({ ok: false, interrupted: true });
      expect(await runEditor('exit 3 #', file)).toMatchObject({ ok: false, interrupted: false });
      expect(await runEditor('true', file)).toEqual({ ok: true });
    },
  );

  it('has the shell exec a plain command, and run anything else itself', () => {
    for (const plain of ['vim', 'code --wait', "vim -c 'set ft=markdown'", '/usr/bin/nano -w', 'true'])
      expect(isPlainCommand(plain), plain).toBe(true);
    for (const shell of [
      'exit 130 #',
      'kill -INT $$',
      'vim; echo done',
      'TERM=xterm vim',
      'a | b',
      'exit 3',
      '',
    ])
      expect(isPlainCommand(shell), shell).toBe(false);
  });
});

describe('CONTRIBUTING.md', () => {
  it('lists every file of src/ and src/lib/ in its layout', () => {
    const contributing = readFileSync(join(cliRoot, 'CONTRIBUTING.md'), 'utf8');
    const layout = contributing.split('## Layout')[1]!.split('```')[1]!;
    const listed = new Set([...layout.matchAll(/^(src\/\S+)/gm)].map(([, path]) => path));
    for (const dir of ['src', 'src/lib']) {
      for (const name of readdirSync(join(cliRoot, dir)).filter((name) => name.endsWith('.ts')))
        expect(listed, `${dir}/${name}`).toContain(`${dir}/${name}`);
    }
  });
});
