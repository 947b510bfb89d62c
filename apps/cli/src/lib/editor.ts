import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeDirectories } from './make-directories';
import { recoveryDir } from './store';

/** `$VISUAL`, else `$EDITOR`, else vi (notepad on Windows): what git and gh open. */
export function editorCommand(env: NodeJS.ProcessEnv = process.env): string {
  return env.VISUAL || env.EDITOR || (process.platform === 'win32' ? 'notepad' : 'vi');
}

/** A file name safe in any shell and file system, from a document's name. */
export function safeFileName(name: string): string {
  const base = name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[-.]+|-+$/g, '') || 'document';
  return /\.(md|markdown|txt)$/i.test(base) ? base : `${base}.md`;
}

/** A scratch file holding a document's text while an editor has it open. */
export class EditFile {
  readonly path: string;
  private readonly dir: string;

  constructor(name: string, content: string) {
    this.dir = mkdtempSync(join(tmpdir(), 'convene-edit-'));
    this.path = join(this.dir, safeFileName(name));
    writeFileSync(this.path, content, { mode: 0o600 });
  }

  read(): string {
    return readFileSync(this.path, 'utf8');
  }

  /** Whether the file holds something other than `text` (what it was opened with); a file gone is unchanged. */
  changedFrom(text: string): boolean {
    try {
      return this.read() !== text;
    } catch {
      return false;
    }
  }

  /** Keeps the text where it survives a reboot and returns that file's path. */
  keep(name: string): string {
    const dir = recoveryDir();
    makeDirectories(dir, 0o700);
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const kept = join(dir, `${stamp}-${safeFileName(name)}`);
    copyFileSync(this.path, kept);
    return kept;
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export type EditorExit =
  | { ok: true }
  | {
      ok: false;
      reason: string;
      hint?: string;
      /**
       * The editor ended on Ctrl-C: stopped by SIGINT (or its shell exiting 130). A terminal's
       * Ctrl-C reaches the editor and convene together, and the editor's exit may be seen first.
       */
      interrupted?: boolean;
    };

/** What only a shell can run: operators, expansions, comments, and words that are not programs. */
const SHELL_SYNTAX = /[;&|<>()`$#\n\\]/;
const SHELL_WORDS = new Set([
  'exit',
  'kill',
  'cd',
  ':',
  '.',
  'eval',
  'exec',
  'set',
  'trap',
  'command',
  '!',
  '{',
]);

/**
 * Whether the shell can `exec` the command: a program and its arguments (`vim`, `code --wait`,
 * `vim -c 'set ft=markdown'`), with no operator, expansion, assignment or builtin.
 */
export function isPlainCommand(command: string): boolean {
  const first = command.trim().split(/\s+/)[0] ?? '';
  return first !== '' && !SHELL_SYNTAX.test(command) && !first.includes('=') && !SHELL_WORDS.has(first);
}

/**
 * Opens the editor on a file and resolves when it exits. The command runs through the shell,
 * as git does, so `EDITOR="code --wait"` works; the file name is quoted. A plain command is
 * `exec`ed by that shell, so that how the editor ends is what convene sees: a shell left waiting
 * (dash) dies of a Ctrl-C that the editor itself carried on through.
 *
 * When `signal` aborts (convene got SIGTERM, or SIGHUP: its terminal closed), the editor gets the
 * same signal, as git's does, and is given a moment to write what it keeps; convene stops waiting
 * then even if it carries on, so that the text is kept and the lock released.
 */
export function runEditor(command: string, file: string, signal?: AbortSignal): Promise<EditorExit> {
  return new Promise((resolve) => {
    const line = `${command} ${shellQuote(file)}`;
    const exec = process.platform !== 'win32' && isPlainCommand(command);
    const terminal = terminalSettings();
    const child = spawn(exec ? `exec ${line}` : line, { shell: true, stdio: 'inherit' });
    let grace: NodeJS.Timeout | undefined;
    const stopped = () => {
      const name = (signal?.reason as Error | undefined)?.message;
      const forwarded: NodeJS.Signals = name === 'SIGHUP' || name === 'SIGINT' ? name : 'SIGTERM';
      child.kill(forwarded);
      grace = setTimeout(
        () => resolve({ ok: false, reason: `${command} was still open`, interrupted: true }),
        EDITOR_GRACE_MS,
      );
    };
    if (signal?.aborted) stopped();
    else signal?.addEventListener('abort', stopped, { once: true });
    const settle = (exit: EditorExit) => {
      clearTimeout(grace);
      signal?.removeEventListener('abort', stopped);
      // An editor that did not end by itself left the terminal as it had it (raw, no echo):
      // what convene says next would step down the screen.
      if (!exit.ok) terminal?.restore();
      resolve(exit);
    };
    child.once('error', (error) =>
      settle({ ok: false, reason: `cannot start ${command}: ${error.message}` }),
    );
    child.once('exit', (code, killedBy) => {
      if (code === 0) settle({ ok: true });
      // The shell's own codes for a command it could not run.
      else if (code === 127 || code === 126)
        settle({
          ok: false,
          reason: `cannot run the editor \`${command}\` (${code === 127 ? 'not found' : 'not executable'})`,
          hint: 'Set $VISUAL or $EDITOR to an editor you have, e.g. EDITOR=nano.',
        });
      else
        settle({
          ok: false,
          reason: killedBy ? `${command} was stopped by ${killedBy}` : `${command} exited with ${code}`,
          interrupted: killedBy === 'SIGINT' || code === 130,
        });
    });
  });
}

/**
 * The settings of the terminal convene runs in (`stty -g`), to restore them after an editor that
 * was stopped; none without a terminal, or without stty.
 */
function terminalSettings(): { restore(): void } | undefined {
  if (process.platform === 'win32' || !process.stdin.isTTY) return undefined;
  const saved = spawnSync('stty', ['-g'], { stdio: ['inherit', 'pipe', 'ignore'], encoding: 'utf8' });
  const settings = saved.status === 0 ? saved.stdout.trim() : '';
  if (!settings) return undefined;
  return {
    // The terminal may be gone (SIGHUP): then there is nothing to restore, and stty fails quietly.
    restore: () => void spawnSync('stty', [settings], { stdio: ['inherit', 'ignore', 'ignore'] }),
  };
}

/** How long an editor told to stop has to write what it keeps (vim its swap file) before convene goes on. */
const EDITOR_GRACE_MS = 2000;

function shellQuote(text: string): string {
  if (process.platform === 'win32') return `"${text}"`;
  return `'${text.replaceAll("'", "'\\''")}'`;
}
