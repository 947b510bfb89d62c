import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { finished } from './helpers/cli';
import { repoRoot } from './helpers/paths';
import { freePort, onPostgres } from './helpers/server';

const work = mkdtempSync(join(tmpdir(), 'convene-package-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

// Once per run (it packs and installs from the registry), on the embedded database.
describe.runIf(!onPostgres())('the packed tarball', () => {
  it('installs with `npm install -g` on a machine with only Node and npm, and its convene serves and works', async () => {
    execFileSync('pnpm', ['--filter', '@convene/cli', 'pack', '--pack-destination', work], {
      cwd: repoRoot,
      stdio: 'ignore',
    });
    const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'));
    expect(tarball).toBeDefined();

    // Outside the workspace, with nothing on PATH but Node and npm.
    const prefix = join(work, 'global');
    const home = join(work, 'home');
    const path = [dirname(process.execPath), '/usr/bin', '/bin'].join(':');
    // The rest of the environment stays: it may carry the machine's certificates for the registry.
    const { CONVENE_URL: _url, CONVENE_TOKEN: _token, TEST_DATABASE_URL: _db, ...machine } = process.env;
    const env = {
      ...machine,
      PATH: path,
      HOME: home,
      XDG_CONFIG_HOME: join(home, 'config'),
      XDG_DATA_HOME: join(home, 'data'),
    } as Record<string, string>;
    execFileSync(
      'npm',
      ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', join(work, tarball!)],
      {
        cwd: work,
        // The user's npm cache, so a second run does not download everything again.
        env: {
          ...env,
          npm_config_cache: process.env.npm_config_cache ?? join(process.env.HOME ?? home, '.npm'),
        },
        stdio: ['ignore', 'ignore', 'pipe'],
        timeout: 240_000,
      },
    );
    const convene = join(prefix, 'bin/convene');
    const run = (args: string[], extra: Record<string, string> = {}) =>
      finished(
        spawn(convene, args, { cwd: work, env: { ...env, ...extra }, stdio: ['pipe', 'pipe', 'pipe'] }),
        {
          timeoutMs: 60_000,
        },
      );

    expect((await run(['--version'])).stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);

    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const server = spawn(convene, ['serve', '--port', String(port), '--data-dir', join(work, 'data')], {
      cwd: work,
      env: { ...env, PUBLIC_URL: url, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    server.stdout!.on('data', (chunk) => {
      log += chunk;
    });
    server.stderr!.on('data', (chunk) => {
      log += chunk;
    });
    try {
      const deadline = Date.now() + 90_000;
      while (!log.includes(`listening on ${url}`)) {
        if (server.exitCode !== null || Date.now() > deadline)
          throw new Error(`convene serve did not start:\n${log}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      // What the server reads from disk shipped in the package: migrations ran; pages, assets and guides load.
      expect((await fetch(`${url}/`)).status).toBe(200);
      expect((await fetch(`${url}/web/style.css`)).status).toBe(200);
      // The space page's script, and every chunk the page it belongs to imports.
      const script = await (await fetch(`${url}/web/space.js`)).text();
      const chunks = [...script.matchAll(/"\.\/(chunk-[\w-]+\.js)"/g)].map((m) => m[1]);
      expect(chunks.length).toBeGreaterThan(0);
      for (const chunk of chunks) expect((await fetch(`${url}/web/${chunk}`)).status).toBe(200);
      expect(await (await fetch(`${url}/auth.md`)).text()).toContain(url);

      const as = { CONVENE_URL: url };
      const created = await run(['space', 'create', 'From the tarball', '--json'], as);
      expect(created.code).toBe(0);
      const { humanLink } = (await run(['invite', '--json'], as)).json();
      const guest = { XDG_CONFIG_HOME: join(home, 'guest') };
      expect((await run(['join', humanLink, '--name', 'Tara', '--json'], guest)).code).toBe(0);
      expect((await run(['send', 'hello from the tarball'], guest)).code).toBe(0);
      const messages = (await run(['messages', '--json'], as)).json();
      expect(messages.map((m: any) => m.content)).toEqual(['hello from the tarball']);
      const doc = await finished(
        spawn(convene, ['artifact', 'create', 'notes.md', '--file', '-'], {
          cwd: work,
          env: { ...env, ...as },
          stdio: ['pipe', 'pipe', 'pipe'],
        }),
        { input: '# Notes\n' },
      );
      expect(doc.code).toBe(0);
      expect((await run(['artifact', 'download', 'notes.md'], guest)).stdout).toBe('# Notes\n');
      const answer = (await run(['ask', 'lock an artifact', '--json'], as)).json();
      expect(answer.results.length).toBeGreaterThan(0);
    } finally {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  }, 300_000);
});
