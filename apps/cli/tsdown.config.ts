import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, type UserConfig } from 'tsdown';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '../..');

/**
 * The files the bundled server reads from disk at run time, relative to the repository. They
 * ship in the package under `assets/`, in the same layout as in the repository. The diff worker
 * is a thread's entry point (`new Worker(new URL('./diff-worker.mjs', …))` in core's
 * diff-engine.ts), loaded from its file, not bundled; it imports unified-diff.mjs beside it. The
 * snapshot of a new PGlite cluster (core's build: src/db/pglite-seed.ts) is what a new embedded
 * database starts from.
 */
const SERVER_FILES = [
  'packages/core/drizzle',
  'packages/core/pglite-seed',
  'packages/core/src/artifacts/diff-worker.mjs',
  'packages/core/src/artifacts/unified-diff.mjs',
  'packages/server/content',
  'apps/web/dist',
];

/**
 * What every command loads as it starts, bundled into convene's own file rather than resolved and
 * loaded from node_modules, module by module: the command line (commander, its typings' wrapper),
 * colours, the configuration's directory, the width of table cells, the event stream's parser (the
 * SDK's). Loading them as modules was about a tenth of a short command's CPU. `a>b` names `b`, a
 * dependency of `a`, which is bundled with it.
 */
const START = [
  'commander',
  '@commander-js/extra-typings',
  'picocolors',
  'env-paths',
  'env-paths>is-safe-filename',
  'fast-string-width',
  'fast-string-width>fast-string-truncated-width',
  'eventsource-parser',
];
/** A package's name in `START`. */
const bundledName = (entry: string) => entry.slice(entry.lastIndexOf('>') + 1);

/**
 * Third-party packages whose code the tarball carries inside its own files, by the workspace
 * package that bundles them: trpc-to-openapi and tRPC in dist/ (patched, so bundled), DOMPurify
 * and eventsource-parser (through the SDK) in the web pages, postgres in dist/ (patched), zod's
 * mini build in dist/ (for the start of every command). Their licences require their notices to
 * go with every copy: each one's licence files ship under `assets/licenses/<package>/`.
 */
const BUNDLED_THIRD_PARTY: Record<string, readonly string[]> = {
  'apps/cli': ['trpc-to-openapi', '@trpc/server', 'postgres', 'zod', '@electric-sql/pglite', ...START],
  'apps/web': ['dompurify'],
  'packages/sdk': ['eventsource-parser'],
};

/** Licences that ask for no notice with copies (public-domain dedications). */
const NO_NOTICE = new Set(['Unlicense', 'CC0-1.0', '0BSD']);

/** The directory of `name` as `from` (a workspace package) resolves it; `a>b` is `b` as `a` resolves it. */
function packageDir(name: string, from: string): string {
  const parent = name.lastIndexOf('>');
  if (parent !== -1) {
    const dependent = packageDir(name.slice(0, parent), from);
    return packageDir(name.slice(parent + 1), relative(repo, dependent));
  }
  let dir = dirname(createRequire(join(repo, from, 'package.json')).resolve(name));
  while (!existsSync(join(dir, 'package.json')) || !dir.endsWith(join('node_modules', name))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package directory for ${name}`);
    dir = parent;
  }
  return dir;
}

/** Copies the licence files of every bundled third-party package under `assets/licenses/`. */
function copyLicences(assets: string): void {
  for (const [from, names] of Object.entries(BUNDLED_THIRD_PARTY))
    for (const name of names) {
      const dir = packageDir(name, from);
      const files = readdirSync(dir).filter((file) => /^(licen[cs]e|copying|notice)/i.test(file));
      const target = join(assets, 'licenses', bundledName(name));
      mkdirSync(target, { recursive: true });
      for (const file of files) cpSync(join(dir, file), join(target, file));
      if (files.length > 0) continue;
      // A dedication to the public domain asks for no notice, and postgres ships none: its
      // package.json names it, which is said here.
      const { license } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { license?: string };
      if (!license || !NO_NOTICE.has(license)) throw new Error(`${name} ships no licence file`);
      writeFileSync(
        join(target, 'LICENSE'),
        `${bundledName(name)} is released under the ${license} (package.json "license").\n`,
      );
    }
}

/**
 * The workspace packages (sdk, contract, core, server) are bundled: they are not published, so
 * the tarball must carry them. Their code finds its files relative to `import.meta.url`
 * (`new URL('./dist/', import.meta.url)` in apps/web), which in a bundle is the chunk's URL. This
 * plugin gives each workspace module the URL it had in the repository, moved under `assets/`,
 * so every such path lands on the copy shipped there, and the server's code needs no option.
 */
// Spelled in pieces: the loader of this config file rewrites the literal expression anywhere in it.
const META_URL = ['import', 'meta', 'url'].join('.');

function workspaceModuleUrls() {
  return {
    name: 'convene:workspace-module-urls',
    transform(code: string, id: string) {
      const path = id.split('?')[0]!;
      if (!code.includes(META_URL)) return null;
      const fromRepo = relative(repo, path);
      const inWorkspace = fromRepo.startsWith('packages/') || fromRepo.startsWith('apps/web/');
      if (!inWorkspace || fromRepo.includes('node_modules')) return null;
      // Chunks are written to the output directory, one level below the assets' parent.
      const url = `new URL(${JSON.stringify(`../assets/${fromRepo}`)}, ${META_URL}).href`;
      return { code: code.replaceAll(META_URL, url), map: null };
    },
  };
}

/**
 * PGlite's JavaScript is bundled, patched (patches/: its protocol reader kept no leading U+FEFF);
 * its WebAssembly and data files are not JavaScript, and stay in the installed package, which is
 * still a dependency. PGlite finds them beside its own module (`new URL('./pglite.wasm',
 * import.meta.url)`): in the bundle, that URL is the installed package's entry point.
 */
function pgliteAssetUrls() {
  return {
    name: 'convene:pglite-asset-urls',
    transform(code: string, id: string) {
      if (!id.split('?')[0]!.includes(join('node_modules', '@electric-sql', 'pglite', 'dist'))) return null;
      if (!code.includes(META_URL)) return null;
      const url = `${['import', 'meta', 'resolve'].join('.')}('@electric-sql/pglite')`;
      return { code: code.replaceAll(META_URL, url), map: null };
    },
  };
}

const config: UserConfig = defineConfig({
  entry: { convene: 'src/main.ts' },
  format: 'esm',
  platform: 'node',
  target: 'node20',
  outDir: 'dist',
  clean: true,
  dts: false,
  sourcemap: false,
  deps: {
    // The workspace packages are bundled (they resolve to source, not node_modules). Of the
    // packages in node_modules trpc-to-openapi, tRPC, postgres and PGlite are, because the
    // workspace patches them (patches/); their own dependencies are listed. Everything else the
    // server loads is a dependency (postgres too: drizzle-orm imports it, and would load that
    // unpatched copy, which only makes clients from a URL, something Convene never asks of it).
    // What every command loads is bundled for its start (START), and so is zod/mini
    // (src/lib/store.ts); the server's code imports zod itself, external.
    onlyBundle: [
      'trpc-to-openapi',
      '@trpc/server',
      'postgres',
      'zod',
      '@electric-sql/pglite',
      ...START.map(bundledName),
    ],
    alwaysBundle: ['postgres', 'zod/mini', '@electric-sql/pglite', ...START.map(bundledName)],
  },
  plugins: [workspaceModuleUrls(), pgliteAssetUrls()],
  hooks: {
    // Beside the output directory (the package root for dist/; the tests build elsewhere).
    'build:done': ({ options }) => {
      const assets = join(dirname(options.outDir), 'assets');
      rmSync(assets, { recursive: true, force: true });
      for (const path of SERVER_FILES) {
        if (!existsSync(join(repo, path))) {
          throw new Error(
            `${path} is missing: build it first (pnpm --filter @convene/web --filter @convene/core build)`,
          );
        }
        cpSync(join(repo, path), join(assets, path), { recursive: true });
      }
      copyLicences(assets);
    },
  },
});

export default config;
