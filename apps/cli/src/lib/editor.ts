import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

  /** Keeps the text where it survives a reboot and returns that file's path. */
  keep(name: string): string {
    const dir = recoveryDir();
    mkdirSync(dir, { recursive: true, mode: 0o700 });
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

/**
 * Opens the editor on a file and resolves when it exits. The command runs through the shell,
 * as git does, so `EDITOR="code --wait"` works; the file name is quoted. The shell `exec`s it, so
 * that how the editor ends is what convene sees: a shell left waiting would die of a Ctrl-C the
 * editor itself chose to carry on through.
 */
export function runEditor(command: string, file: string): Promise<EditorExit> {
  return new Promise((resolve) => {
    const line = `${command} ${shellQuote(file)}`;
    const child = spawn(process.platform === 'win32' ? line : `exec ${line}`, {
      shell: true,
      stdio: 'inherit',
    });
    child.once('error', (error) =>
      resolve({ ok: false, reason: `cannot start ${command}: ${error.message}` }),
    );
    child.once('exit', (code, signal) => {
      if (code === 0) resolve({ ok: true });
      // The shell's own codes for a command it could not run.
      else if (code === 127 || code === 126)
        resolve({
          ok: false,
          reason: `cannot run the editor \`${command}\` (${code === 127 ? 'not found' : 'not executable'})`,
          hint: 'Set $VISUAL or $EDITOR to an editor you have, e.g. EDITOR=nano.',
        });
      else
        resolve({
          ok: false,
          reason: signal ? `${command} was stopped by ${signal}` : `${command} exited with ${code}`,
          interrupted: signal === 'SIGINT' || code === 130,
        });
    });
  });
}

function shellQuote(text: string): string {
  if (process.platform === 'win32') return `"${text}"`;
  return `'${text.replaceAll("'", "'\\''")}'`;
}
