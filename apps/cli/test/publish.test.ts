// The package is published as the SDK is: to npm, public, with the files its bin runs.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliRoot } from './helpers/paths';

const manifest = JSON.parse(readFileSync(join(cliRoot, 'package.json'), 'utf8'));
const readme = readFileSync(join(cliRoot, 'README.md'), 'utf8');

describe('the package manifest', () => {
  it('can be published: not private, public access under the @convene scope', () => {
    expect(manifest.name).toBe('@convene/cli');
    expect(manifest.private).toBeUndefined();
    expect(manifest.publishConfig).toEqual({ access: 'public' });
    expect(manifest.license).toBe('MIT');
  });

  it('ships the bundle the bin runs, the server’s files and the README, and nothing else', () => {
    expect(manifest.bin).toEqual({ convene: './dist/convene.mjs' });
    expect(manifest.files).toEqual(['dist', 'assets', 'README.md']);
    // The workspace packages are bundled into dist: none may be a run-time dependency.
    expect(Object.keys(manifest.dependencies).filter((name) => name.startsWith('@convene/'))).toEqual([]);
  });

  it('depends on nothing the bundle never loads: DOMPurify lives in the web pages’ own bundle', () => {
    // The web pages (assets/apps/web/dist) carry DOMPurify inside them; no code under dist/ imports
    // it, so as a dependency it was only downloaded. (light-my-request is not imported either, but
    // fastify loads it for inject() and depends on it: the pin keeps npm on a version that asks
    // for no newer Node than 20.)
    expect(manifest.dependencies).not.toHaveProperty('dompurify');
    expect(manifest.dependencies).toHaveProperty('light-my-request');
  });

  it('is installed as the README says: from npm once published, from the tarball until then', () => {
    const install = readme.split('\n## Install\n')[1]?.split('\n## ')[0] ?? '';
    expect(install).toContain('`npm install -g @convene/cli`');
    expect(install).toContain('npm install -g ./convene-cli-*.tgz');
  });

  it('sends a user of the tarball nowhere they cannot reach: what needs a checkout is for contributors', () => {
    // The tarball holds no repository: every paragraph that needs one follows (within two) the
    // paragraph that says who it is for.
    const paragraphs = readme.split(/\n\n+/);
    const needsCheckout = paragraphs.flatMap((p, at) =>
      /pnpm |checkout|CONTRIBUTING|repository/.test(p) ? [at] : [],
    );
    expect(needsCheckout.length).toBeGreaterThan(0);
    for (const at of needsCheckout)
      expect(paragraphs.slice(Math.max(0, at - 2), at + 1).join('\n\n'), paragraphs[at]).toContain(
        'For contributors, in the Convene repository',
      );
  });

  it('ships the MIT licence its manifest declares, with the notice every copy must carry', () => {
    // npm packs a LICENSE beside package.json whatever `files` says (package.test checks the tarball).
    const licence = readFileSync(join(cliRoot, 'LICENSE'), 'utf8');
    expect(manifest.license).toBe('MIT');
    expect(licence).toMatch(/^MIT License\n\nCopyright \(c\) 2026 Convene contributors\n/);
    expect(licence).toContain('The above copyright notice and this permission notice shall be included');
  });

  it('names in its README every project whose licence it ships (assets/licenses/)', () => {
    const section = readme.slice(readme.indexOf('## Licence')).replace(/\s+/g, ' ');
    // The package's name as people call the project, where it differs.
    const called: Record<string, string> = { '@trpc/server': 'tRPC', '@electric-sql/pglite': 'PGlite' };
    const dir = join(cliRoot, 'assets/licenses');
    const shipped = readdirSync(dir).flatMap((name) =>
      name.startsWith('@') ? readdirSync(join(dir, name)).map((inner) => `${name}/${inner}`) : [name],
    );
    expect(shipped).toContain('@electric-sql/pglite');
    for (const name of shipped) {
      expect({
        name,
        named: section.toLowerCase().includes(`${called[name] ?? name}, `.toLowerCase()),
      }).toEqual({
        name,
        named: true,
      });
    }
  });
});
