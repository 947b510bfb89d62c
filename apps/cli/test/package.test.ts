// The package as a newcomer meets it: packed in the repository with the READMEs' own command,
// installed from the tarball on a machine with nothing but Node and npm, and each README's quick
// start run there command by command, verbatim, in a blank directory.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type RunResult, watch } from './helpers/cli';
import { cliRoot, repoRoot } from './helpers/paths';
import { freePort } from './helpers/server';

const work = mkdtempSync(join(tmpdir(), 'convene-package-'));
const started: ChildProcess[] = [];
afterAll(() => {
  // A walkthrough that failed half-way may leave its server or tail running.
  for (const child of started) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  rmSync(work, { recursive: true, force: true });
});

/** The ```sh blocks of a README between two headings. */
function shBlocks(file: string, from: string, to: string): string[] {
  const text = readFileSync(file, 'utf8');
  const start = text.indexOf(`\n${from}\n`);
  const end = text.indexOf(`\n${to}\n`, start);
  if (start < 0 || end < 0) throw new Error(`${file} has no section "${from}" followed by "${to}"`);
  return [...text.slice(start, end).matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!.trim());
}

const READMES = [
  {
    name: 'README.md, From a terminal',
    blocks: shBlocks(join(repoRoot, 'README.md'), '## From a terminal', '## Use it from an MCP host'),
  },
  {
    name: 'apps/cli/README.md, Install and Quick start',
    blocks: shBlocks(join(cliRoot, 'README.md'), '## Install', '## Commands'),
  },
];
/** What runs in the repository (`pnpm …`), what installs the tarball, and the walkthrough. */
const parts = READMES.map(({ name, blocks }) => ({
  name,
  repository: blocks.filter((b) => b.startsWith('pnpm ')),
  install: blocks.filter((b) => b.startsWith('npm install')),
  walkthrough: blocks.filter((b) => !b.startsWith('pnpm ') && !b.startsWith('npm install')),
}));

// A machine with Node and npm and nothing else on PATH (bash runs the READMEs' lines).
const bin = join(work, 'bin');
mkdirSync(bin);
for (const tool of ['node', 'npm', 'npx', 'bash', 'sh']) {
  symlinkSync(
    execFileSync('bash', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim(),
    join(bin, tool),
  );
}
const prefix = join(work, 'global');
const {
  CONVENE_URL: _url,
  CONVENE_TOKEN: _token,
  TEST_DATABASE_URL: _db,
  XDG_CONFIG_HOME: _config,
  XDG_DATA_HOME: _data,
  EDITOR: _editor,
  VISUAL: _visual,
  CI: _ci,
  PORT: _port,
  ...machine
} = process.env;
// The rest of the environment stays: it may carry the machine's certificates for the registry.
const base = {
  ...machine,
  PATH: `${join(prefix, 'bin')}:${bin}`,
  // `npm install -g` installs here instead of the machine's global prefix.
  npm_config_prefix: prefix,
  // The user's npm cache, so a second run does not download everything again.
  npm_config_cache: process.env.npm_config_cache ?? join(process.env.HOME ?? work, '.npm'),
  npm_config_audit: 'false',
  npm_config_fund: 'false',
} as Record<string, string>;

/** The server at `url` gives back a message starting with U+FEFF as it was sent. */
async function expectKeepsLeadingFeff(url: string): Promise<void> {
  const post = async (path: string, body: unknown, key?: string) =>
    (await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { 'x-private-key': key } : {}) },
      body: JSON.stringify(body),
    }).then((res) => res.json())) as Record<string, string>;
  const space = await post('/hub/space', { name: 'Bytes', description: 'as sent' });
  await post(`/hub/space/${space.spaceId}/messages`, { content: '\uFEFFhello' }, space.ownerPrivateKey);
  const listed = (await fetch(`${url}/hub/space/${space.spaceId}/messages`, {
    headers: { 'x-private-key': space.ownerPrivateKey! },
  }).then((res) => res.json())) as { messages: { content: string }[] };
  expect(listed.messages.map((m) => m.content)).toEqual(['\uFEFFhello']);
}

/** A terminal of the READMEs: bash running one block, its output collected. */
function terminal(block: string, cwd: string, env: Record<string, string>, timeoutMs = 240_000) {
  // Its own process group, so Ctrl-C (SIGINT to the group) reaches it as a keyboard's would.
  const child = spawn('bash', ['-e', '-c', block], {
    cwd,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  });
  started.push(child);
  return watch(child, { timeoutMs });
}

function expectOk(block: string, result: RunResult): RunResult {
  if (result.code !== 0) {
    throw new Error(
      `"${block}" exited with ${result.code}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`,
    );
  }
  return result;
}

// It packs and installs from the registry; the READMEs' servers are the embedded database.
describe('the packed tarball and the READMEs', () => {
  it('packs with the READMEs’ command and installs as they say, globally or in a project', async () => {
    for (const part of parts) {
      expect(part.repository, part.name).toEqual(['pnpm install\npnpm --filter @convene/cli pack']);
      expect(part.install, part.name).toEqual(['npm install -g ./convene-cli-*.tgz']);
    }
    // `pnpm install` has run: this test runs in the installed checkout. The pack runs verbatim.
    for (const old of readdirSync(repoRoot).filter((f) => /^convene-cli-.*\.tgz$/.test(f)))
      rmSync(join(repoRoot, old));
    expectOk(
      'pnpm --filter @convene/cli pack',
      await terminal('pnpm --filter @convene/cli pack', repoRoot, process.env as Record<string, string>).done,
    );
    const tarball = readdirSync(repoRoot).find((f) => /^convene-cli-\d+\.\d+\.\d+\.tgz$/.test(f));
    expect(tarball).toBeDefined();
    // The MIT notice goes with every copy (npm packs LICENSE whatever `files` says), and so do the
    // notices of the third-party code bundled into dist/ and the web pages.
    const files = execFileSync('tar', ['tzf', join(repoRoot, tarball!)], { encoding: 'utf8' });
    expect(files).toMatch(/^package\/LICENSE$/m);
    for (const bundled of [
      'trpc-to-openapi',
      '@trpc/server',
      '@electric-sql/pglite',
      'dompurify',
      'eventsource-parser',
      'commander',
      'picocolors',
    ])
      expect(files).toMatch(new RegExp(`^package/assets/licenses/${bundled}/LICENSE$`, 'm'));
    // Nothing of how this repository builds it (.pnpmfile.cjs): no devDependencies naming
    // unpublished workspace packages, no scripts running files the tarball does not hold.
    const manifest = JSON.parse(
      execFileSync('tar', ['xzf', join(repoRoot, tarball!), '-O', 'package/package.json'], {
        encoding: 'utf8',
      }),
    ) as Record<string, unknown>;
    expect(manifest.devDependencies).toBeUndefined();
    expect(manifest.scripts).toBeUndefined();
    expect(manifest.bin).toEqual({ convene: './dist/convene.mjs' });
    // Where apps/cli/README.md says it lands, under the name it gives.
    const readme = readFileSync(join(cliRoot, 'README.md'), 'utf8').replace(/\s+/g, ' ');
    expect(readme).toContain('That writes `convene-cli-<version>.tgz` at the root of the checkout');
    expect(readme).toContain(`(\`${tarball}\` today)`);
    const downloads = join(work, 'downloads');
    mkdirSync(downloads);
    renameSync(join(repoRoot, tarball!), join(downloads, tarball!));

    const install = parts[0]!.install[0]!;
    const installed = expectOk(
      install,
      await terminal(install, downloads, { ...base, HOME: join(work, 'home') }).done,
    );
    // Every dependency supports the Node.js the READMEs name (20.12+): npm warns of none.
    expect(`${installed.stdout}${installed.stderr}`).not.toContain('EBADENGINE');
    const version = await terminal('convene --version', work, base).done;
    expect(version.stdout.trim()).toBe(
      JSON.parse(readFileSync(join(cliRoot, 'package.json'), 'utf8')).version,
    );

    // The other way apps/cli/README.md names: into a project, run with npx.
    const local = readFileSync(join(cliRoot, 'README.md'), 'utf8').match(
      /`(npm install \.\/convene-cli-\*\.tgz && npx convene --help)`/,
    )?.[1];
    expect(local).toBeDefined();
    const project = join(work, 'project');
    mkdirSync(project);
    renameSync(join(downloads, tarball!), join(project, tarball!));
    const help = expectOk(
      local!,
      await terminal(local!, project, { ...base, HOME: join(work, 'home') }).done,
    );
    expect(help.stdout).toContain('Usage: convene <command> [options]');
  }, 600_000);

  for (const [index, part] of parts.entries()) {
    it(`runs the walkthrough of ${part.name} in a blank directory`, async () => {
      expect(existsSync(join(prefix, 'bin/convene')), 'installed by the test above').toBe(true);
      const dir = join(work, `walkthrough-${index}`);
      const home = join(dir, 'home');
      mkdirSync(home, { recursive: true });
      // The person at the editor adds a line and quits.
      const editor = join(work, `editor-${index}.sh`);
      writeFileSync(editor, '#!/bin/sh\nprintf -- "- dates\\n" >> "$1"\n', { mode: 0o755 });
      const port = await freePort();
      const url = `http://localhost:${port}`;
      // Not port 3000 (the README's default): the environment points the same commands elsewhere.
      const env = { ...base, HOME: home, CONVENE_URL: url, EDITOR: editor };

      // Exactly one placeholder, the link `convene invite` prints, which the reader pastes.
      const placeholders = part.walkthrough.join('\n').match(/"<[^">]+>"/g) ?? [];
      expect(placeholders).toEqual(['"<the link for people>"']);

      let server: ReturnType<typeof terminal> | undefined;
      let stopped: RunResult | undefined;
      let link: string | undefined;
      const seen: string[] = [];
      try {
        for (const written of part.walkthrough) {
          const block = link ? written.replace(placeholders[0]!, JSON.stringify(link)) : written;
          seen.push(block);
          if (block === 'convene serve') {
            server = terminal(block, dir, { ...env, PORT: String(port) }, 600_000);
            await server.waitFor(`listening on http://127.0.0.1:${port}`, {
              in: 'output',
              timeoutMs: 120_000,
            });
            await expectServesPages(url);
          } else if (block === 'convene tail') {
            const tail = terminal(block, dir, env);
            await tail.waitFor(/Ada: I'll draft the dates/, { in: 'output', timeoutMs: 60_000 });
            await tail.waitFor('Following Release plan live', { in: 'output', timeoutMs: 60_000 });
            process.kill(-tail.child.pid!, 'SIGINT');
            expect((await tail.done).code, 'Ctrl-C stops tail: exit 0 (issue 14)').toBe(0);
          } else {
            const result = expectOk(block, await terminal(block, dir, env).done);
            if (block.includes('convene invite')) {
              link = result.stdout.match(/^for people\s+(\S+)$/m)?.[1];
              expect(link).toMatch(new RegExp(`^${url}/join/[0-9a-f-]{36}#key=inv_`));
            }
            if (block.includes('convene join')) expect(result.stderr).toContain('Joined Release plan as Ada');
            // The person at the keyboard is a person to the others, and the 24 h the text names.
            if (block.includes('convene space create') && part.name.startsWith('apps/cli')) {
              expect(result.stdout).toMatch(/^you are +Grace, a human, role owner$/m);
              expect(result.stderr).toContain('(closes in 1d)');
            }
            if (block.includes('convene artifact edit')) {
              expect(result.stderr).toContain('Saved plan.md as version 2');
              expect(result.stdout).toMatch(/^VERSION\s+BY\s+WHEN\s+BYTES\n2\s+\S+.*\n1\s+/m);
            }
          }
        }
        // Every block ran, and the README's people ended with their own keys.
        expect(seen.some((b) => b.includes('convene join "http'))).toBe(true);
        // The diff of the edit comes from the server's diff worker, a file shipped beside the
        // bundle: without it the server answers the replace-everything patch (-# Plan, +# Plan).
        const diff = expectOk(
          'convene artifact diff plan.md',
          await terminal('convene artifact diff plan.md', dir, env).done,
        );
        expect(diff.stdout).toMatch(/^ # Plan$/m);
        expect(diff.stdout).toMatch(/^\+- dates$/m);
        expect(diff.stdout).not.toMatch(/^-# Plan$/m);
        // Text comes back as it was sent, a leading U+FEFF too: the bundle carries PGlite's
        // reader patched (patches/), where the copy npm installed beside it drops that character.
        const installedPglite = dirname(
          createRequire(join(prefix, 'lib/node_modules/@convene/cli/package.json')).resolve(
            '@electric-sql/pglite',
          ),
        );
        expect(readFileSync(join(installedPglite, 'chunk-Y6PULSM7.js'), 'utf8')).not.toContain('ignoreBOM');
        await expectKeepsLeadingFeff(url);
        const keys = (config: string) =>
          Object.values(
            JSON.parse(readFileSync(join(config, 'convene/credentials.json'), 'utf8')).hosts[url].spaces,
          );
        expect(keys(join(home, '.config')).map((s: any) => s.role)).toEqual(['owner']);
        expect(keys(join(home, '.config/ada')).map((s: any) => s.role)).toEqual(['participant']);
      } finally {
        if (server && server.child.exitCode === null) {
          // Ctrl-C in the first terminal.
          process.kill(-server.child.pid!, 'SIGINT');
          stopped = await server.done;
        }
      }
      // Checked after the walkthrough, so that a failure in it is the one reported, and with what
      // the server printed, so that a shutdown that failed or took too long says why.
      if (stopped)
        expect(stopped.code, `Ctrl-C stops convene serve cleanly; it printed:\n${server!.output()}`).toBe(0);
      expect(existsSync(join(dir, '.data')), 'the server kept its data in ./.data').toBe(true);
    }, 600_000);
  }
});

/** What the server reads from disk shipped in the package: pages, their scripts, the guides. */
async function expectServesPages(url: string): Promise<void> {
  expect((await fetch(`${url}/`)).status).toBe(200);
  expect((await fetch(`${url}/web/style.css`)).status).toBe(200);
  // The space page's script, and every chunk it imports.
  const script = await (await fetch(`${url}/web/space.js`)).text();
  const chunks = [...script.matchAll(/"\.\/(chunk-[\w-]+\.js)"/g)].map((m) => m[1]);
  expect(chunks.length).toBeGreaterThan(0);
  for (const chunk of chunks) expect((await fetch(`${url}/web/${chunk}`)).status).toBe(200);
  expect(await (await fetch(`${url}/auth.md`)).text()).toContain(url);
}
