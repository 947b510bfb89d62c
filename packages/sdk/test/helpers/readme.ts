// The README's code blocks, as its readers copy them: test/unit/readme-types.test.ts type-checks
// every one, test/readme.test.ts runs those that can run, both verbatim.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const packageRoot = join(dirname(fileURLToPath(import.meta.url)), '../..');

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
