// Every ```ts and ```js block of the README type-checks as its readers would compile it: each
// block verbatim, after a prelude that declares only what its section says it assumes (a space
// client `me`, a signal…), with `tsc --strict` (and the stricter noUncheckedIndexedAccess and
// exactOptionalPropertyTypes) on Node's types, where `@convene/sdk` is this package's sources.
// Names of the SDK a block uses must be imported by the block itself, as a reader has to.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot, type ReadmeBlock, readmeBlocks } from '../helpers/readme';

/** A participant's client, as `hub.join` gives it and the sections call `me`. */
const me = 'declare const me: JoinedSpaceClient;';
const importTypes = (...names: string[]) => `import type { ${names.join(', ')} } from "@convene/sdk";`;

/** What the sections on withLock assume: a client, an artifact's id and some work on its text. */
const withLockPrelude = [
  importTypes('JoinedSpaceClient'),
  me,
  "/** An artifact's id. */",
  'declare const id: string;',
  'declare function think(content: string): Promise<string>;',
].join('\n');

/**
 * What each section's blocks assume, by section title: one prelude for all its blocks, or one per
 * block. A section with a block of code and no prelude fails, as does a prelude of no section.
 */
const preludes: Record<string, string | string[]> = {
  'Quick start': '',
  'Approve joiners (owner)': [
    importTypes('JoinedSpaceClient'),
    'declare const owner: JoinedSpaceClient;',
    'declare const signal: AbortSignal;',
  ].join('\n'),
  'Join a private space': [
    importTypes('Convene'),
    'declare const hub: Convene;',
    'declare const link: string;',
  ].join('\n'),
  Responses: [importTypes('JoinedSpaceClient'), me].join('\n'),
  Errors: [
    // The first block joins, as `me`, itself.
    [
      importTypes('Convene'),
      'declare const hub: Convene;',
      'declare const agentLink: string;',
      'declare function giveUp(spaceId: string): void;',
    ].join('\n'),
    [importTypes('JoinedSpaceClient'), me].join('\n'),
    [importTypes('JoinedSpaceClient'), me, "/** An artifact's id. */", 'declare const id: string;'].join(
      '\n',
    ),
  ],
  Streams: [
    importTypes('JoinedSpaceClient', 'MessageView'),
    me,
    'declare function handle(message: MessageView): Promise<void>;',
  ].join('\n'),
  'Recover from a restart': [
    importTypes('JoinedSpaceClient', 'MessageView', 'StreamEvent'),
    me,
    'declare const signal: AbortSignal;',
    'declare function observe(event: StreamEvent): void;',
    'declare function handle(message: MessageView): Promise<void>;',
  ].join('\n'),
  'Messages: text, images, HTML': [importTypes('JoinedSpaceClient'), me].join('\n'),
  'What concerns you: mentions, the inbox, long polls, webhooks': [
    [
      importTypes('JoinedSpaceClient', 'MessageView'),
      me,
      'declare const reviewerId: string;',
      'declare function handle(message: MessageView): Promise<void>;',
    ].join('\n'),
    [
      importTypes('JoinedSpaceClient'),
      me,
      '// What a webhook receiver has: the request, its raw body, the secret kept from webhooks.create.',
      'declare const request: Request;',
      'declare const rawBody: string;',
      'declare const secret: string;',
    ].join('\n'),
  ],
  'Several loops in one agent': '',
  'Artifacts and `withLock`': withLockPrelude,
  'Waiting for the lock': withLockPrelude,
  'Linking an agent to a human': [importTypes('Convene'), 'declare const hub: Convene;'].join('\n'),
  Options: '',
};

interface Checked extends ReadmeBlock {
  /** The file tsc compiles: the prelude, then the block. */
  file: string;
  /** How many lines of the file the prelude takes. */
  preludeLines: number;
}

const code = readmeBlocks().filter((b) => b.language === 'ts' || b.language === 'js');
const name = (b: ReadmeBlock) => `${b.section} #${b.index + 1} (\`\`\`${b.language}, README.md:${b.line})`;

/** The prelude of a block; undefined when its section has none. */
function preludeOf(b: ReadmeBlock): string | undefined {
  const prelude = preludes[b.section];
  return Array.isArray(prelude) ? prelude[b.index] : prelude;
}

describe("the README's code", () => {
  let dir: string;
  let checked: Checked[];
  /** tsc's diagnostics by file name, each with the README line it is on. */
  const diagnostics = new Map<string, string[]>();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'convene-readme-types-'));
    checked = code.flatMap((b) => {
      const prelude = preludeOf(b);
      if (prelude === undefined) return [];
      // A prelude that imports nothing would leave the block a script: the blocks share no scope.
      const head = `${prelude}\nexport {};\n`;
      const file = `${b.section.replace(/\W+/g, '-').toLowerCase()}-${b.index + 1}.${b.language === 'ts' ? 'mts' : 'mjs'}`;
      writeFileSync(join(dir, file), head + b.code);
      return [{ ...b, file, preludeLines: head.split('\n').length - 1 }];
    });
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noUncheckedIndexedAccess: true,
          exactOptionalPropertyTypes: true,
          allowJs: true,
          checkJs: true,
          noEmit: true,
          target: 'es2022',
          module: 'esnext',
          moduleResolution: 'bundler',
          lib: ['es2023'],
          types: ['node'],
          typeRoots: [join(packageRoot, 'node_modules/@types')],
          paths: { '@convene/sdk': [join(packageRoot, 'src/index.ts')] },
        },
        files: checked.map((c) => c.file),
      }),
    );
    const tsc = join(packageRoot, 'node_modules/.bin/tsc');
    const output = await promisify(execFile)(tsc, ['-p', '.', '--pretty', 'false'], { cwd: dir }).then(
      ({ stdout }) => stdout,
      (error: { stdout?: string; message: string }) => error.stdout || error.message,
    );
    // `file.mts(12,5): error TS2304: …`, then its continuation lines, indented.
    for (const entry of output.split(/\n(?! )/).filter(Boolean)) {
      const at = /^([^(\s]+)\((\d+),(\d+)\): ([\s\S]*)$/.exec(entry);
      const c = checked.find((c) => c.file === at?.[1]);
      const key = c?.file ?? '';
      const line = Number(at?.[2]);
      const where = !c
        ? ''
        : line > c.preludeLines
          ? `README.md:${c.line + line - c.preludeLines - 1}`
          : 'the prelude';
      diagnostics.set(key, [...(diagnostics.get(key) ?? []), c ? `${where}: ${at?.[4]}` : entry]);
    }
  }, 60_000);
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('has a prelude for every section with code, and none for a section without', () => {
    const sections = new Set(code.map((b) => b.section));
    expect(code.filter((b) => preludeOf(b) === undefined).map(name)).toEqual([]);
    expect(Object.keys(preludes).filter((s) => !sections.has(s))).toEqual([]);
    for (const [section, prelude] of Object.entries(preludes))
      if (Array.isArray(prelude))
        expect(prelude.length, `preludes of ${section}`).toBe(
          code.filter((b) => b.section === section).length,
        );
  });

  it('compiles nothing but the blocks and the SDK cleanly', () => {
    expect(diagnostics.get('') ?? []).toEqual([]);
  });

  it.each(code.map((b) => [name(b), b] as const))('type-checks %s', (_, b) => {
    const c = checked.find(
      (c) => c.section === b.section && c.index === b.index && c.language === b.language,
    );
    expect(c, `no prelude for ${name(b)}`).toBeDefined();
    expect(diagnostics.get(c?.file ?? '') ?? [], `${name(b)} does not compile`).toEqual([]);
  });
});
