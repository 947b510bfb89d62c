// The README's code blocks, as its readers copy them: test/unit/readme-types.test.ts type-checks
// every one, test/readme.test.ts runs those that can run, both verbatim.
import { spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { childEnv } from '@convene/core/testing';

export const packageRoot = join(dirname(fileURLToPath(import.meta.url)), '../..');
const tsx = join(packageRoot, '../../node_modules/.bin/tsx');

/** One fenced block of README.md. */
export interface ReadmeBlock {
  /** The title of the heading it is under, without its `#`s: `Approve joiners (owner)`. */
  section: string;
  /** Its position among the blocks of that section and language: 0, 1… */
  index: number;
  /** What follows its opening fence: `ts`, `js`, `text`, `sh`. */
  language: string;
  /** The line of README.md where its code starts (1-based). */
  line: number;
  /** Its text, verbatim, ending with a newline. */
  code: string;
}

/** Every fenced block of README.md, in order (a `#` inside a block is no heading). */
export function readmeBlocks(readme = readFileSync(join(packageRoot, 'README.md'), 'utf8')): ReadmeBlock[] {
  const blocks: ReadmeBlock[] = [];
  let section = '';
  let open: Omit<ReadmeBlock, 'code'> | undefined;
  let lines: string[] = [];
  for (const [i, text] of readme.split('\n').entries()) {
    if (open) {
      if (text === '```') {
        blocks.push({ ...open, code: `${lines.join('\n')}\n` });
        open = undefined;
      } else lines.push(text);
      continue;
    }
    const fence = /^```(\w+)$/.exec(text);
    const heading = /^#+ (.+)$/.exec(text);
    if (fence) {
      const language = fence[1] as string;
      const index = blocks.filter((b) => b.section === section && b.language === language).length;
      open = { section, index, language, line: i + 2 };
      lines = [];
    } else if (heading) section = heading[1] as string;
  }
  if (open) throw new Error(`README.md: the block at line ${open.line - 1} is never closed`);
  return blocks;
}

/** The `index`th block of `language` under the heading `section`, verbatim. */
export function block(section: string, language: string, index = 0): string {
  const found = readmeBlocks().find(
    (b) => b.section === section && b.language === language && b.index === index,
  );
  if (!found) throw new Error(`README.md has no \`\`\`${language} block #${index + 1} under "${section}"`);
  return found.code;
}

/** A README example running as a program: its output so far, and its end. */
export interface RunningExample {
  /** What it printed on stdout so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves once stdout contains `text`; rejects if the program ends first. */
  printed(text: string): Promise<void>;
  /** `promise`, which the program should settle: rejects, with its output, if it ends first. */
  meanwhile<T>(promise: Promise<T>): Promise<T>;
  /** Sends it a signal (its prelude turns SIGTERM into an abort). */
  kill(signal: NodeJS.Signals): void;
  /** Resolves with its output once it exits 0; rejects with its output otherwise. */
  exit: Promise<{ stdout: string; stderr: string }>;
}

/**
 * Runs `code` (a README block wrapped in the test's prelude and epilogue) with tsx, where
 * `@convene/sdk` resolves to the package itself (its sources), with `env` added to the test's.
 * The program is written inside the package and removed once it has exited.
 */
export function runExample(
  name: string,
  code: string,
  env: Record<string, string>,
  { extension = 'mts', timeoutMs = 50_000 } = {},
): RunningExample {
  const file = join(packageRoot, `.readme-${name}-${process.pid}.${extension}`);
  writeFileSync(file, code);
  const child = spawn(tsx, [file], { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const waiting = new Set<() => void>();
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    for (const check of waiting) check();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  // 'close', not 'exit': the process may exit before the last of its output is read.
  const ended = new Promise<number | null>((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      rmSync(file, { force: true });
      resolve(code);
    }),
  );
  const output = () => `stdout:\n${stdout}\nstderr:\n${stderr}`;
  const exit = ended.then((code) => {
    if (code !== 0) throw new Error(`the ${name} example exited with ${code}\n${output()}`);
    return { stdout, stderr };
  });
  exit.catch(() => {}); // awaited by the test, or reported by printed()
  return {
    stdout: () => stdout,
    stderr: () => stderr,
    printed: (text) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!stdout.includes(text)) return;
          waiting.delete(check);
          resolve();
        };
        waiting.add(check);
        check();
        ended.then(() => {
          if (stdout.includes(text)) return resolve();
          reject(
            new Error(`the ${name} example ended without printing ${JSON.stringify(text)}\n${output()}`),
          );
        });
      }),
    meanwhile: (promise) =>
      Promise.race([
        promise,
        ended.then((code) => {
          throw new Error(`the ${name} example ended (${code}) before the test expected\n${output()}`);
        }),
      ]),
    kill: (signal) => child.kill(signal),
    exit,
  };
}
