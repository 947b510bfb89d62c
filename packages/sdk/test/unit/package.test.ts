// The package as a user meets it: packed, checked, installed from the tarball with npm in an
// empty directory outside the workspace, and running the README's quick start there.
import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkTarball, packTarball } from '../../scripts/check-package';
import { measureBundle } from '../../scripts/size';
import { type RunningServer, startServer } from '../helpers/server';

const run = promisify(execFile);
const packageRoot = join(dirname(fileURLToPath(import.meta.url)), '../..');

/** The first ```js block after the README's "## Quick start" heading, verbatim. */
function quickStart(readme: string): string {
  const section = readme.split(/^## Quick start$/m)[1];
  const code = section?.match(/```js\n([\s\S]*?)```/)?.[1];
  if (!code) throw new Error('README.md has no ```js block under "## Quick start"');
  return code;
}

/** The ```text block of the README's "## Quick start": what the quick start prints. */
function quickStartOutput(readme: string): string {
  const section = readme.split(/^## Quick start$/m)[1]?.split(/^## /m)[0];
  const output = section?.match(/```text\n([\s\S]*?)```/)?.[1];
  if (!output) throw new Error('README.md has no ```text block under "## Quick start"');
  return output;
}

/**
 * The other runtimes the SDK promises, from the npm registry (the packages that ship their
 * binaries), pinned, installed once per machine outside the workspace so that no install of the
 * workspace carries 200 MB of runtimes. Resolves with their binaries, or with why they could not
 * be had (no registry), in which case the test says so and is skipped.
 */
const RUNTIMES = { bun: '1.4.5', deno: '2.9.6' } as const;

async function installRuntimes(): Promise<{ bun: string; deno: string } | { problem: string }> {
  const dir = join(tmpdir(), `convene-runtimes-bun-${RUNTIMES.bun}-deno-${RUNTIMES.deno}`);
  const bin = (name: string) => join(dir, 'node_modules/.bin', name);
  const ready = () => existsSync(bin('bun')) && existsSync(bin('deno'));
  if (!ready()) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'runtimes', private: true }));
    try {
      await run(
        'npm',
        [
          'install',
          `bun@${RUNTIMES.bun}`,
          `deno@${RUNTIMES.deno}`,
          '--no-audit',
          '--no-fund',
          '--no-save',
          '--loglevel=error',
        ],
        { cwd: dir },
      );
    } catch (error) {
      return { problem: `npm could not install bun and deno: ${(error as Error).message.split('\n')[0]}` };
    }
    if (!ready()) return { problem: `npm installed bun and deno into ${dir}, but not their binaries` };
  }
  return { bun: bin('bun'), deno: bin('deno') };
}

describe('the published package', () => {
  let tarball: string;
  let project: string;
  let server: RunningServer | undefined;

  beforeAll(async () => {
    tarball = packTarball();
    project = mkdtempSync(join(tmpdir(), 'convene-sdk-user-'));
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'user', private: true, type: 'module' }),
    );
  }, 180_000);
  afterAll(async () => {
    await server?.close();
    if (project) rmSync(project, { recursive: true, force: true });
    if (tarball) rmSync(dirname(tarball), { recursive: true, force: true });
  });

  it('passes publint (strict) and arethetypeswrong', () => {
    expect(checkTarball(tarball)).toContain('No problems found');
  });

  it('ships dist, its declarations, the README and the licence, and depends on eventsource-parser alone', async () => {
    const { stdout } = await run('tar', ['tzf', tarball]);
    expect(stdout.trim().split('\n').sort()).toEqual(
      [
        'package/LICENSE',
        'package/README.md',
        'package/dist/index.cjs',
        'package/dist/index.d.cts',
        'package/dist/index.d.ts',
        'package/dist/index.js',
        'package/package.json',
      ].sort(),
    );
    const { stdout: manifest } = await run('tar', ['xzf', tarball, '-O', 'package/package.json']);
    const pkg = JSON.parse(manifest) as Record<string, unknown>;
    expect(pkg.private).toBeUndefined();
    expect(pkg.dependencies).toEqual({ 'eventsource-parser': expect.stringMatching(/^\^3\./) });
    // Nothing of how this repository builds it (.pnpmfile.cjs): no devDependencies naming
    // unpublished workspace packages, no scripts running files the tarball does not hold.
    expect(pkg.devDependencies).toBeUndefined();
    expect(pkg.scripts).toBeUndefined();
    expect(JSON.stringify(pkg.exports)).not.toContain('src/');
    // A resolver that matches neither `import` nor `require` (custom conditions) falls back to
    // the ES module: `default` comes last, as conditions are tried in order.
    const root = (pkg.exports as Record<string, Record<string, unknown>>)['.']!;
    expect(Object.keys(root)).toEqual(['import', 'require', 'default']);
    expect(root.default).toEqual({ types: './dist/index.d.ts', default: './dist/index.js' });
    // The licence package.json declares, with the notice MIT asks every copy to carry.
    const { stdout: licence } = await run('tar', ['xzf', tarball, '-O', 'package/LICENSE']);
    expect(pkg.license).toBe('MIT');
    expect(licence).toMatch(/^MIT License\n\nCopyright \(c\) 2026 Convene contributors\n/);
    expect(licence).toContain('The above copyright notice and this permission notice shall be included');
  });

  it('is installed as the README says, by the tarball its CONTRIBUTING.md builds; no checkout asked of users', async () => {
    const section = (file: string, heading: string) =>
      readFileSync(join(packageRoot, file), 'utf8')
        .split(new RegExp(`^## ${heading}$`, 'm'))[1]
        ?.split(/^## /m)[0];
    const install = section('README.md', 'Install');
    expect(install).toContain(`npm install ./${basename(tarball)}\n`);
    expect(install).toContain(`(\`${basename(tarball)}\` today)`);
    // What only a checkout of the repository can run is said to be for contributors, there.
    const paragraphs = readFileSync(join(packageRoot, 'README.md'), 'utf8').split(/\n\n+/);
    const contributors = paragraphs.filter((p) => /pnpm |checkout|CONTRIBUTING/.test(p));
    expect(contributors.length).toBeGreaterThan(0);
    for (const paragraph of contributors)
      expect(paragraph).toContain('For contributors, in the Convene repository');
    const packing = section('CONTRIBUTING.md', 'Packing it');
    expect(packing).toContain('```sh\npnpm install\npnpm --filter @convene/sdk pack\n```');
    expect(packing).toContain(`\`${basename(tarball)}\` today`);
    expect(packing).toContain(`npm install <path to the checkout>/${basename(tarball)}\n`);
  });

  it('installs with npm in an empty directory and runs the README quick start against a server', async () => {
    await run('npm', ['install', tarball, '--no-audit', '--no-fund', '--loglevel=error'], { cwd: project });
    expect(readdirSync(join(project, 'node_modules')).sort()).toEqual([
      '.package-lock.json',
      '@convene',
      'eventsource-parser',
    ]);

    server = await startServer({}, undefined);
    const readme = readFileSync(join(packageRoot, 'README.md'), 'utf8');
    writeFileSync(join(project, 'quickstart.mjs'), quickStart(readme));
    const { stdout } = await run('node', ['quickstart.mjs'], {
      cwd: project,
      env: { ...process.env, CONVENE_URL: server.url },
    });
    // Exactly the output the README shows.
    expect(stdout).toBe(quickStartOutput(readme));
    expect(stdout).toContain('Planner: Hello! I will draft the plan.');
    expect(stdout).toContain('# Plan\n- ship it');

    // The same code type-checks against the declarations the tarball installed.
    const tsc = join(packageRoot, 'node_modules/.bin/tsc');
    await run(
      tsc,
      [
        '--noEmit',
        '--strict',
        '--allowJs',
        '--checkJs',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--target',
        'es2022',
        '--typeRoots',
        join(packageRoot, 'node_modules/@types'),
        '--types',
        'node',
        'quickstart.mjs',
      ],
      { cwd: project },
    ).catch((error: { stdout?: string }) => {
      throw new Error(`the quick start does not type-check against the package:\n${error.stdout}`);
    });

    // CommonJS consumers get the same client.
    const { stdout: cjs } = await run(
      'node',
      ['-e', 'const sdk = require("@convene/sdk"); console.log(typeof sdk.Convene, typeof sdk.LockedError)'],
      { cwd: project },
    );
    expect(cjs.trim()).toBe('function function');
  });

  it('exports at run time every value its declarations export, from both builds', async () => {
    const ts = (await import('typescript')).default;
    /** The value exports (classes, functions, constants) that TypeScript sees in the declarations. */
    const declared = (probe: string, source: string) => {
      const file = join(project, probe);
      writeFileSync(file, source);
      const program = ts.createProgram([file], {
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        target: ts.ScriptTarget.ES2022,
        noEmit: true,
        types: [],
      });
      const checker = program.getTypeChecker();
      const statement = program.getSourceFile(file)!.statements[0] as import('typescript').ImportDeclaration;
      const module = checker.getSymbolAtLocation(statement.moduleSpecifier);
      if (!module) throw new Error(`${probe}: TypeScript did not resolve @convene/sdk`);
      return checker
        .getExportsOfModule(module)
        .filter((symbol) => {
          const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
          return (target.flags & ts.SymbolFlags.Value) !== 0;
        })
        .map((symbol) => symbol.name)
        .sort();
    };
    const runtime = async (source: string) =>
      JSON.parse(
        (await run('node', ['--input-type=module', '-e', source], { cwd: project })).stdout,
      ) as string[];
    const esm = await runtime(
      `console.log(JSON.stringify(Object.keys(await import('@convene/sdk')).sort()))`,
    );
    const cjs = await runtime(
      `import { createRequire } from 'node:module';
       const sdk = createRequire(import.meta.url)('@convene/sdk');
       console.log(JSON.stringify(Object.keys(sdk).filter((name) => name !== '__esModule').sort()))`,
    );
    expect(esm).toContain('routes');
    expect(declared('exports.mts', `import * as sdk from '@convene/sdk';\n`)).toEqual(esm);
    // A .cts file resolves the package as require does: its CommonJS declarations.
    expect(declared('exports.cts', `import * as sdk from '@convene/sdk';\n`)).toEqual(cjs);
    expect(cjs).toEqual(esm);
  });

  it('lets a bundler keep only what is imported: one helper does not bring the client, its stream or withLock', async () => {
    // As an application bundles the installed package (esbuild, for a browser, minified). The
    // classes install their inspect hooks when constructed, not at the top of the module, which
    // would make every bundler keep them all.
    const { build } = await import('esbuild');
    const bundle = async (name: string) => {
      const { outputFiles } = await build({
        stdin: { contents: `export { ${name} } from '@convene/sdk';`, resolveDir: project, loader: 'js' },
        bundle: true,
        minify: true,
        format: 'esm',
        platform: 'browser',
        write: false,
        logLevel: 'silent',
      });
      return outputFiles[0]!.text;
    };
    // What only the clients use: withLock, the stream (its SSE headers, eventsource-parser's
    // words), the key's header, the route table.
    const clientOnly = [
      'withLock',
      'text/event-stream',
      'Last-Event-ID',
      'X-Private-Key',
      'heartbeatArtifactLock',
    ];
    const full = await bundle('Convene');
    expect(clientOnly.filter((marker) => !full.includes(marker))).toEqual([]);
    // All of it, as an application that imports everything bundles it: under the 15,000 bytes the
    // README promises by this measure too (a trial's esbuild found 15,116 when the repo's own
    // script said 14,808: the two minifiers differ by about 300 bytes).
    const { outputFiles } = await build({
      stdin: { contents: `export * from '@convene/sdk';`, resolveDir: project, loader: 'js' },
      bundle: true,
      minify: true,
      format: 'esm',
      write: false,
      logLevel: 'silent',
    });
    expect(gzipSync(outputFiles[0]!.text, { level: 9 }).length).toBeLessThan(15_000);
    for (const [name, own] of [
      ['parseInvitationLink', 'not an invitation link'],
      ['verifyWebhook', 'whsec_'],
    ] as const) {
      const one = await bundle(name);
      expect(one, name).toContain(own);
      // Said without the bundle, which would fill the report.
      expect(
        clientOnly.filter((marker) => one.includes(marker)),
        name,
      ).toEqual([]);
      // The client is about 40 kB minified; a helper with the errors it throws, a few.
      expect(one.length, name).toBeLessThan(full.length / 5);
    }
  });

  it('recognises its errors across its ESM and CommonJS builds (instanceof)', async () => {
    // An application that imports the SDK and also requires it (through a CommonJS dependency)
    // holds two copies of every class: an error of one copy must be recognised by the other.
    const { stdout } = await run(
      'node',
      [
        '--input-type=module',
        '-e',
        `import { createRequire } from 'node:module';
         const esm = await import('@convene/sdk');
         const cjs = createRequire(import.meta.url)('@convene/sdk');
         const locked = new esm.LockedError('423 held', { status: 423, body: { error: 'held', lockedBy: 'p' } });
         const timeout = new cjs.TimeoutError('no answer');
         console.log(JSON.stringify({
           twoCopies: esm.LockedError !== cjs.LockedError,
           lockedAsLocked: locked instanceof cjs.LockedError,
           lockedAsBase: locked instanceof cjs.ConveneError,
           timeoutAsConnection: timeout instanceof esm.ConnectionError,
           webhook: new cjs.WebhookVerificationError('bad') instanceof esm.WebhookVerificationError,
           lockedAsNotFound: locked instanceof cjs.NotFoundError,
           baseAsLocked: new cjs.ConveneError('x') instanceof esm.LockedError,
           connectionAsTimeout: new esm.ConnectionError('x') instanceof cjs.TimeoutError,
           plainAsBase: new Error('x') instanceof cjs.ConveneError,
         }));`,
      ],
      { cwd: project },
    );
    expect(JSON.parse(stdout)).toEqual({
      twoCopies: true,
      lockedAsLocked: true,
      lockedAsBase: true,
      timeoutAsConnection: true,
      webhook: true,
      lockedAsNotFound: false,
      baseAsLocked: false,
      connectionAsTimeout: false,
      plainAsBase: false,
    });
  });

  it("type-checks under TypeScript's defaults (target ES5, CommonJS) without skipLibCheck", async () => {
    writeFileSync(
      join(project, 'defaults.ts'),
      `import { Convene, LockedError } from '@convene/sdk';\n` +
        `export const hub = new Convene({ baseUrl: 'http://localhost:3000' });\n` +
        `export const isLocked = (error: unknown) => error instanceof LockedError && error.lockedBy;\n`,
    );
    const tsc = join(packageRoot, 'node_modules/.bin/tsc');
    await run(
      tsc,
      [
        '--noEmit',
        '--strict',
        '--module',
        'commonjs',
        '--typeRoots',
        join(packageRoot, 'node_modules/@types'),
        '--types',
        'node',
        'defaults.ts',
      ],
      { cwd: project },
    ).catch((error: { stdout?: string }) => {
      throw new Error(`the declarations do not compile under TypeScript's defaults:\n${error.stdout}`);
    });
  });

  it('needs the lib the README names for fetch and its types: @types/node, DOM or WebWorker', async () => {
    const install = readFileSync(join(packageRoot, 'README.md'), 'utf8')
      .split(/^## Install$/m)[1]
      ?.split(/^## /m)[0];
    for (const said of ['`@types/node`', '`DOM`', '`WebWorker`', "Cannot find name 'Response'"])
      expect(install).toContain(said);
    const tsc = join(packageRoot, 'node_modules/.bin/tsc');
    /** tsc's report on defaults.ts (the test above) with these libs and types, '' when it compiles. */
    const check = async (lib: string[], types: string[]) => {
      const config = join(project, `tsconfig.${[...lib, ...types].join('-')}.json`);
      writeFileSync(
        config,
        JSON.stringify({
          compilerOptions: {
            strict: true,
            noEmit: true,
            skipLibCheck: false,
            module: 'nodenext',
            target: 'es2022',
            lib,
            types,
            typeRoots: [join(packageRoot, 'node_modules/@types')],
          },
          files: ['defaults.ts'],
        }),
      );
      return run(tsc, ['-p', config], { cwd: project }).then(
        () => '',
        (error: { stdout?: string }) => error.stdout ?? 'failed',
      );
    };
    expect(await check(['es2022'], [])).toContain("Cannot find name 'Response'");
    expect(await check(['es2022'], ['node'])).toBe('');
    expect(await check(['es2022', 'dom'], [])).toBe('');
    expect(await check(['es2022', 'webworker'], [])).toBe('');
  });

  it('documents on hover what a user reaches for, from the installed declarations', async () => {
    const ts = (await import('typescript')).default;
    const file = join(project, 'hover.ts');
    const source = `import { Convene, NotFoundError } from '@convene/sdk';
const hub = new Convene({ baseUrl: 'http://localhost:3000' });
const me = hub.space('s', 'k', 'p');
await me.artifacts.withLock('a', (doc) => doc.write(doc.content + doc.version + doc.id));
await me.artifacts.get('a', { timeoutMs: 1, maxRetries: 0, headers: {} });
await me.participants.kick('p'); await me.participants.mute('p'); await me.participants.unmute('p');
await hub.spaces.recoverKey('s'); await hub.health();
const flow = await hub.link.start(); await flow.wait({ intervalMs: 1 });
export const refused: NotFoundError | undefined = undefined;
`;
    writeFileSync(file, source);
    const options: import('typescript').CompilerOptions = {
      strict: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      types: [],
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    };
    const service = ts.createLanguageService({
      getScriptFileNames: () => [file],
      getScriptVersion: () => '1',
      getScriptSnapshot: (name) =>
        existsSync(name) ? ts.ScriptSnapshot.fromString(readFileSync(name, 'utf8')) : undefined,
      getCurrentDirectory: () => project,
      getCompilationSettings: () => options,
      getDefaultLibFileName: ts.getDefaultLibFilePath,
      fileExists: ts.sys.fileExists,
      readFile: ts.sys.readFile,
      readDirectory: ts.sys.readDirectory,
      directoryExists: ts.sys.directoryExists,
      getDirectories: ts.sys.getDirectories,
    });
    /** The documentation and tags an editor shows on hovering the first `word` of the file. */
    const hover = (word: string) => {
      const info = service.getQuickInfoAtPosition(file, source.indexOf(word));
      const tags = (info?.tags ?? []).map((tag) => `@${tag.name} ${ts.displayPartsToString(tag.text)}`);
      return [ts.displayPartsToString(info?.documentation), ...tags].join('\n').trim();
    };
    const undocumented = [
      'withLock',
      'write(',
      'content +',
      'version +',
      'id)',
      "get('a'",
      'timeoutMs: 1',
      'maxRetries: 0',
      'headers: {}',
      'kick',
      'mute',
      'unmute',
      'recoverKey',
      'health',
      'NotFoundError |',
    ].filter((word) => hover(word) === '');
    expect(undocumented).toEqual([]);
    expect(hover('withLock')).toContain('@param fn Called with `doc`, a LockedArtifact');
    expect(hover('intervalMs')).toContain('@deprecated Pass `pollIntervalMs`');
  });

  it('runs the same quick start under Bun and Deno', async (ctx) => {
    const runtimes = await installRuntimes();
    if ('problem' in runtimes) return ctx.skip(`Bun and Deno not verified: ${runtimes.problem}`);
    expect(server, 'the npm quick start test starts the server').toBeDefined();
    const env = { ...process.env, CONVENE_URL: server!.url, NO_COLOR: '1' };
    for (const [name, command] of [
      ['bun', [runtimes.bun, 'quickstart.mjs']],
      // Deno reads @convene/sdk from the node_modules npm installed beside package.json.
      ['deno', [runtimes.deno, 'run', '--allow-net', '--allow-env', '--allow-read', 'quickstart.mjs']],
    ] as const) {
      const [bin, ...args] = command;
      const { stdout } = await run(bin, args, { cwd: project, env }).catch((error: { stderr?: string }) => {
        throw new Error(`the quick start failed under ${name}:\n${error.stderr}`);
      });
      expect(stdout, name).toContain('Planner: Hello! I will draft the plan.');
      expect(stdout, name).toContain('# Plan\n- ship it');
    }
  }, 300_000);

  it('has an API reference that builds without warnings', async () => {
    await run(join(packageRoot, 'node_modules/.bin/typedoc'), ['--emit', 'none'], { cwd: packageRoot }).catch(
      (error: { stdout?: string }) => {
        throw new Error(`typedoc reported problems:\n${error.stdout}`);
      },
    );
  });

  it('costs a browser bundle under 15,000 bytes gzip, with nothing of zod, the contract, the server or Node in it', async () => {
    const size = await measureBundle();
    // It was 15 kB, and the bundle 14.86 kB, until withLock learnt to release the lock that a
    // lock call with no answer may have taken (with the transport knowing whether any failed call
    // may have run): 15.19 kB. Waiting for a lock (`waitMs` on lock and withLock): 15.47 kB. A
    // stream's or an inbox loop's return() ending a next() that waits (stoppable): 15.54 kB. The
    // `baseUrl` of a client and of a space client: 15.61 kB. In bytes from then on, as the issue
    // promised it (under 15 kB: 15,000 bytes; 15.61 kB was 15,982, and 16,359 by esbuild from the
    // installed package): fields the constructors set declared rather than defined first, one
    // store for every object's credentials, a stream's connection made as a call (its first one
    // retried as any call's), the route table built by route(), duplicated helpers merged, a few
    // messages said in fewer words: 14,672 bytes (14,964 by esbuild).
    expect(size.gzipBytes).toBeLessThan(15_000);
    expect(size.imports).toEqual([]);
    const dependencies = size.modules.filter((id) => id.includes('node_modules'));
    expect(dependencies.every((id) => id.includes('/eventsource-parser/'))).toBe(true);
    expect(
      size.modules.filter((id) => !id.includes('node_modules')).every((id) => id.startsWith('src/')),
    ).toBe(true);
  });
});
