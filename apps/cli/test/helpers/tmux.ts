import { execFileSync } from 'node:child_process';
import { expect } from 'vitest';
import { eventually, LEAKY_ENV, type User } from './cli';
import { bundle } from './paths';

const quote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

/**
 * A real terminal (tmux, on a private socket) running one command, for what only shows on a
 * TTY: `tail` as a person sees it, Ctrl-C as a keyboard sends it.
 */
export class Terminal {
  private readonly socket = `convene-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  private readonly session = 'cli';

  constructor(command: string[], env: Record<string, string>, cwd: string) {
    const line = [
      'env',
      // The tmux server inherits the runner's environment (CI=true in CI): drop what would leak.
      ...LEAKY_ENV.flatMap((name) => ['-u', name]),
      ...Object.entries(env).map(([k, v]) => quote(`${k}=${v}`)),
      ...command.map(quote),
      // Keep the pane after the command exits, showing its exit code.
      `; echo "EXIT=$?"; sleep 600`,
    ].join(' ');
    this.tmux('new-session', '-d', '-s', this.session, '-x', '160', '-y', '50', '-c', cwd, line);
  }

  /** Everything the pane shows, scrollback included; with `escapes`, its colour codes too. */
  screen(options: { escapes?: boolean } = {}): string {
    const escapes = options.escapes ? ['-e'] : [];
    return this.tmux('capture-pane', '-p', '-J', ...escapes, '-S', '-1000', '-t', this.session);
  }

  press(...keys: string[]): void {
    this.tmux('send-keys', '-t', this.session, ...keys);
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
