// The package is published as the SDK is: to npm, public, with the files its bin runs.
import { readFileSync } from 'node:fs';
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

  it('is installed as the README says: from npm once published, from the tarball until then', () => {
    const install = readme.split('\n## Install\n')[1]?.split('\n## ')[0] ?? '';
    expect(install).toContain('`npm install -g @convene/cli`');
    expect(install).toContain('npm install -g ./convene-cli-*.tgz');
  });
});
