// The README's runnable examples beyond the quick start (test/unit/package.test.ts runs that one
// from the packed package), run verbatim with the workspace's sources against the shared server.
import { execFile } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { serverUrl } from './helpers';

const packageRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const readme = readFileSync(join(packageRoot, 'README.md'), 'utf8');

/** The first block of `language` after the heading `heading`, verbatim. */
function block(heading: string, language: string): string {
  const section = readme.slice(readme.indexOf(`\n${heading}\n`));
  const code = new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``).exec(section)?.[1];
  if (!code) throw new Error(`README.md has no \`\`\`${language} block under "${heading}"`);
  return code;
}

describe('the README', () => {
  it('runs "Several loops in one agent" as written, and it prints what it says', async () => {
    // Inside the package, `@convene/sdk` resolves to the package itself (its sources, through tsx).
    const script = join(packageRoot, `.readme-agents-${process.pid}.mjs`);
    writeFileSync(script, block('## Several loops in one agent', 'js'));
    try {
      const { stdout } = await promisify(execFile)(
        join(packageRoot, '../../node_modules/.bin/tsx'),
        [script],
        { env: { ...process.env, CONVENE_URL: serverUrl() }, timeout: 50_000 },
      );
      expect(stdout).toBe(block('## Several loops in one agent', 'text'));
    } finally {
      rmSync(script, { force: true });
    }
  });
});
