import { type ChildProcess, spawn } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHILD_ENV_DROPPED } from '@convene/core/testing';
import { expect } from 'vitest';
import { bundle } from './paths';

export interface RunResult {
  /** The exit code as a shell reports it: 128 + the signal's number for a process a signal ended. */
  code: number | null;
  /** The signal that ended it, when one did (convene ends by the signal it was stopped with). */
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (fails the test with the output when it is not). */
  json<T = any>(): T;
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  input?: string | Buffer;
  /**
   * What convene's stdin is: a socket, as child_process gives one (the default, as test harnesses
   * and some runners give), a pipe from a shell (`… | convene`), a file (`convene < F`, holding
   * `input`) or /dev/null.
   */
  stdin?: 'socket' | 'pipe' | 'file' | 'null';
  cwd?: string;
  timeoutMs?: number;
  /** Its own process group, so a test can send the group a terminal's Ctrl-C (SIGINT). */
  detached?: boolean;
}

/**
 * One person (or agent) at a terminal: their own config and data directories, the server's
 * URL in CONVENE_URL, and `run(...args)` to call `convene` as a child process.
 */
/** The test runner's own environment that must not leak into a CLI under test (a real CONVENE_URL, colours, CI). */
export const LEAKY_ENV = [
  'CONVENE_URL',
  'CONVENE_TOKEN',
  'NO_COLOR',
  'FORCE_COLOR',
  'CI',
  'AI_AGENT',
  'EDITOR',
  'VISUAL',
  ...CHILD_ENV_DROPPED,
] as const;

export class User {
  readonly home: string;
  readonly env: Record<string, string>;
  /** Files written for `stdin: 'pipe' | 'file'`, one a run. */
  private inputs = 0;

  constructor(url: string | undefined, env: Record<string, string> = {}) {
    this.home = mkdtempSync(join(tmpdir(), 'convene-cli-user-'));
    this.env = {
      HOME: this.home,
      XDG_CONFIG_HOME: join(this.home, 'config'),
      XDG_DATA_HOME: join(this.home, 'data'),
      ...(url ? { CONVENE_URL: url } : {}),
      ...env,
    };
  }

  /** Runs `convene ...args` and waits for it to exit. */
  run(args: string[], options: RunOptions = {}): Promise<RunResult> {
    const child = this.spawn(args, options);
    return finished(child, options);
  }

  spawn(args: string[], options: RunOptions = {}): ChildProcess {
    const base = { ...process.env };
    for (const name of LEAKY_ENV) delete base[name];
    const spawnOptions = {
      cwd: options.cwd ?? this.home,
      env: { ...base, ...this.env, ...options.env } as NodeJS.ProcessEnv,
      detached: options.detached ?? false,
    };
    const stdin = options.stdin ?? 'socket';
    if (stdin === 'socket') {
      return spawn(process.execPath, [bundle, ...args], { ...spawnOptions, stdio: ['pipe', 'pipe', 'pipe'] });
    }
    const file = stdin === 'null' ? '/dev/null' : join(this.home, `stdin-${++this.inputs}`);
    if (stdin !== 'null') writeFileSync(file, options.input ?? '');
    if (stdin === 'pipe') {
      // The shell's `|` is a pipe (a FIFO), where child_process would give a socket.
      return spawn('sh', ['-c', 'cat "$0" | "$@"', file, process.execPath, bundle, ...args], {
        ...spawnOptions,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    }
    const fd = openSync(file, 'r');
    try {
      return spawn(process.execPath, [bundle, ...args], { ...spawnOptions, stdio: [fd, 'pipe', 'pipe'] });
    } finally {
      closeSync(fd);
    }
  }

  credentials(): any {
    return JSON.parse(readFileSync(join(this.env.XDG_CONFIG_HOME!, 'convene/credentials.json'), 'utf8'));
  }

  remove(): void {
    rmSync(this.home, { recursive: true, force: true });
  }
}

export function finished(child: ChildProcess, options: RunOptions = {}): Promise<RunResult> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  if (options.input !== undefined) child.stdin?.end(options.input);
  else child.stdin?.end();
  const closed = new Promise((resolve) => child.once('close', resolve));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(`convene did not exit within ${options.timeoutMs ?? 30_000} ms\n${stdout}\n${stderr}`),
      );
    }, options.timeoutMs ?? 30_000);
    child.once('exit', async (code, signal) => {
      clearTimeout(timer);
      // The last of its output may still be on its way after 'exit': it is read until 'close',
      // 2 s at most, as a process it started (an editor) may hold the pipes open after it.
      let grace: NodeJS.Timeout | undefined;
      await Promise.race([closed, new Promise((wait) => (grace = setTimeout(wait, 2_000)))]);
      clearTimeout(grace);
      resolve({
        code: signal ? 128 + constants.signals[signal] : code,
        signal,
        stdout,
        stderr,
        json() {
          try {
            return JSON.parse(stdout);
          } catch {
            throw new Error(`stdout is not JSON (exit ${code}):\n${stdout}\nstderr:\n${stderr}`);
          }
        },
      });
    });
  });
}

/** A process still running, and what it has printed so far. */
export interface Followed {
  readonly child: ChildProcess;
  /** What it printed so far on stdout, on stderr, and on both in the order it came. */
  stdout(): string;
  stderr(): string;
  output(): string;
  /** Its result once it exits (the test fails if that takes longer than `timeoutMs`, 60 s unless told). */
  readonly done: Promise<RunResult>;
  /**
   * Waits until `text` shows in what it printed (on stdout unless told): the match. Fails after
   * `timeoutMs` (20 s unless told), or as soon as it ended without printing it.
   */
  waitFor(
    text: string | RegExp,
    options?: { in?: 'stdout' | 'stderr' | 'output'; timeoutMs?: number },
  ): Promise<RegExpMatchArray>;
  /** A terminal's Ctrl-C (SIGINT), then its result. */
  interrupt(): Promise<RunResult>;
}

/** `convene ...args` left running, for what it prints while it waits or follows (tail, join, login). */
export function follow(user: User, args: string[], options: RunOptions = {}): Followed {
  return watch(user.spawn(args, options), options);
}

/** Any child process left running (a shell, a server), followed as `follow` does. */
export function watch(child: ChildProcess, options: RunOptions = {}): Followed {
  const seen = { stdout: '', stderr: '', output: '' };
  let closed = false;
  child.stdout?.on('data', (chunk) => {
    seen.stdout += chunk;
    seen.output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    seen.stderr += chunk;
    seen.output += chunk;
  });
  child.once('close', () => {
    closed = true;
  });
  const done = finished(child, { timeoutMs: 60_000, ...options });
  // A test that never waits for its end must not fail the run when it is stopped late.
  done.catch(() => {});
  return {
    child,
    stdout: () => seen.stdout,
    stderr: () => seen.stderr,
    output: () => seen.output,
    done,
    async waitFor(text, { in: stream = 'stdout', timeoutMs = 20_000 } = {}) {
      const pattern =
        typeof text === 'string' ? new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) : text;
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        // Whether it had ended is read before its output, so nothing it printed last is missed.
        const ended = closed;
        const match = seen[stream].match(pattern);
        if (match) return match;
        if (ended || Date.now() > deadline) {
          throw new Error(
            `${ended ? 'it ended' : `after ${timeoutMs} ms`} without ${pattern} on ${stream}:\n${seen.output}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    interrupt() {
      child.kill('SIGINT');
      return done;
    },
  };
}

/** Waits until `check` passes (polling), for conditions a loaded machine reaches late. */
export async function eventually<T>(check: () => T | Promise<T>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** A shell script standing in for the person at the editor (`EDITOR=<it>`). */
export function editor(user: User, name: string, body: string): string {
  const path = join(user.home, `${name}.sh`);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

/**
 * An editor (see `editor`) that a test holds open: it says it has the file open by touching
 * `opened`, then stays until the test calls `release()`. It appends the line `text` to the file
 * as it opens it (`write: 'first'`) or once released (`'last'`); it ignores the signals `ignoring`
 * names (`INT`: Ctrl-C, as some editors do; `HUP TERM`: an editor that carries on through them).
 */
export function heldEditor(
  user: User,
  name: string,
  { text, write, ignoring }: { text: string; write: 'first' | 'last'; ignoring?: 'INT' | 'HUP TERM' },
): { ed: string; opened: string; release(): void } {
  const opened = join(user.home, `${name}-open`);
  const released = join(user.home, `${name}-release`);
  const append = `printf "${text}\\n" >> "$1"`;
  const hold = `touch "${opened}"\nwhile [ ! -e "${released}" ]; do sleep 0.05; done`;
  const body = write === 'first' ? `${append}\n${hold}` : `${hold}\n${append}`;
  return {
    ed: editor(user, name, ignoring ? `trap '' ${ignoring}\n${body}` : body),
    opened,
    release: () => writeFileSync(released, ''),
  };
}

/**
 * `convene artifact edit ARTIFACT` with EDITOR set to `ed`, once the editor has the file open
 * (it touches `marker`): the running child and its result to come. In its own process group, so a
 * test can send the group a terminal's Ctrl-C.
 */
export async function editing(
  user: User,
  artifact: string,
  ed: string,
  marker: string,
): Promise<{ child: ChildProcess; done: Promise<RunResult> }> {
  const child = user.spawn(['artifact', 'edit', artifact], { env: { EDITOR: ed }, detached: true });
  const done = finished(child, { timeoutMs: 60_000 });
  // As follow's: a test that fails before it waits for the end (the editor never opened) must not
  // fail a later test with it when the edit is stopped late.
  done.catch(() => {});
  await eventually(() => expect(existsSync(marker)).toBe(true));
  return { child, done };
}

/** A document of the user's default space, by name, as `artifact list --json` shows it. */
export async function byName(user: User, name: string): Promise<any> {
  const list = (await user.run(['artifact', 'list', '--json'])).json();
  return list.find((a: any) => a.name === name);
}

/** `guest` joins the owner's default space through its humanLink, as `name`. */
export async function joinAs(owner: User, guest: User, name: string): Promise<void> {
  const { humanLink } = (await owner.run(['invite', '--json'])).json();
  expect((await guest.run(['join', humanLink, '--name', name])).code).toBe(0);
}

/**
 * The convene command lines a text suggests (between backquotes), each as the arguments a shell
 * would pass for it: a test runs them as a person would copy them.
 */
export function suggested(text: string): string[][] {
  return [...text.matchAll(/`convene ([^`]+)`/g)].map(([, line]) =>
    [...line!.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((word) => word[1] ?? word[2] ?? word[3]!),
  );
}
