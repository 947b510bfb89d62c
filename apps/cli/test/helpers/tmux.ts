import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { eventually, LEAKY_ENV, type User } from './cli';
import { bundle } from './paths';

const quote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

/** The wrapper that runs a terminal's command and says how it ended (see the file). */
const ENDS = join(dirname(fileURLToPath(import.meta.url)), 'ends.cjs');

/**
 * A real terminal (tmux, on a private socket) running one command, for what only shows on a
 * TTY: `tail` as a person sees it, Ctrl-C as a keyboard sends it. The pane stays once the command
 * has ended, showing `EXIT=<code>` (as a shell's `$?`); `ended()` also tells the signal that ended
 * it, if one did, even once the terminal is closed.
 */
export class Terminal {
  private readonly socket = `convene-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  private readonly session = 'cli';
  private readonly endFile = join(tmpdir(), `${this.socket}-ended.json`);

  constructor(
    command: string[],
    env: Record<string, string>,
    cwd: string,
    { width = 160, height = 50 }: { width?: number; height?: number } = {},
  ) {
    const line = [
      'env',
      // The tmux server inherits the runner's environment (CI=true in CI): drop what would leak.
      ...LEAKY_ENV.flatMap((name) => ['-u', name]),
      ...Object.entries(env).map(([k, v]) => quote(`${k}=${v}`)),
      ...[process.execPath, ENDS, this.endFile, ...command].map(quote),
      // Keep the pane after the command exits.
      '; sleep 600',
    ].join(' ');
    this.tmux(
      'new-session',
      '-d',
      '-s',
      this.session,
      '-x',
      String(width),
      '-y',
      String(height),
      '-c',
      cwd,
      line,
    );
  }

  /** Everything the pane shows, scrollback included; with `escapes`, its colour codes too. */
  screen(options: { escapes?: boolean } = {}): string {
    const escapes = options.escapes ? ['-e'] : [];
    return this.tmux('capture-pane', '-p', '-J', ...escapes, '-S', '-1000', '-t', this.session);
  }

  press(...keys: string[]): void {
    this.tmux('send-keys', '-t', this.session, ...keys);
  }

  /** Whether the terminal shows its cursor now. */
  cursorShown(): boolean {
    return this.tmux('display-message', '-p', '-t', this.session, '#{cursor_flag}').trim() === '1';
  }

  /** SIGCONT to everything the pane runs, as a shell's `fg` sends it. */
  resume(): void {
    const shell = Number(this.tmux('display-message', '-p', '-t', this.session, '#{pane_pid}').trim());
    process.kill(-shell, 'SIGCONT');
  }

  /** How the command ended (`code` null when a signal ended it), once it has; the terminal may be closed. */
  ended(): { code: number | null; signal: NodeJS.Signals | null } | undefined {
    return existsSync(this.endFile) ? JSON.parse(readFileSync(this.endFile, 'utf8')) : undefined;
  }

  close(): void {
    try {
      this.tmux('kill-server');
    } catch {
      // already gone
    }
  }

  private tmux(...args: string[]): string {
    return execFileSync('tmux', ['-L', this.socket, '-f', '/dev/null', ...args], { encoding: 'utf8' });
  }
}

/**
 * `convene ...args` run by `user` on a terminal, answered with `key` once `question` shows (none:
 * it must not be asked); the screen once it has exited.
 */
export async function answered(
  user: User,
  args: string[],
  question: string | undefined,
  key?: string,
): Promise<string> {
  const terminal = new Terminal([process.execPath, bundle, ...args], user.env, user.home);
  try {
    if (question !== undefined) {
      await eventually(() => expect(terminal.screen()).toContain(question));
      expect(terminal.screen()).not.toMatch(/EXIT=\d+/);
      terminal.press(key!);
    }
    await eventually(() => expect(terminal.screen()).toMatch(/EXIT=\d+/));
    return terminal.screen();
  } finally {
    terminal.close();
  }
}
