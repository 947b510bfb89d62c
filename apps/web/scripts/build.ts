/**
 * Builds the pages into dist/: `pages/<name>.html`, the shells rendered from src/shell, and
 * `assets/`, served by the server at /web/: one ES module per page (`<name>.js`, bundled with
 * esbuild from src/pages, the SDK and DOMPurify inside), the chunks they share
 * (`chunk-<hash>.js`), `style.css` and `icon.svg`. The shells name the files by their content
 * version (`/web/style.css?v=…`).
 *
 * `pnpm --filter @convene/web build` builds once and prints what each page loads; `dev` rebuilds
 * the scripts and the stylesheet on every change (the shells are rendered at start).
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { type BuildOptions, build, context, type Metafile } from 'esbuild';
import { assetVersion } from '../index';
import { withAssetVersions } from '../src/shell/html';
import { type PageName, shells } from '../src/shell/pages';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Each page's script, by the name its shell loads it by (/web/<name>.js). */
export const entries: Record<PageName, string> = {
  home: 'src/pages/home.ts',
  join: 'src/pages/join.ts',
  space: 'src/pages/space/index.ts',
  login: 'src/pages/login.ts',
  link: 'src/pages/link.ts',
  dashboard: 'src/pages/dashboard.ts',
};

export interface PageSize {
  page: PageName;
  /** The scripts the page loads: its own and the chunks it imports. */
  scripts: string[];
  /** Their sizes, minified, then gzipped (level 9, as a server would send them). */
  bytes: number;
  gzipBytes: number;
}

export interface WebBuild {
  outDir: string;
  /** Every file under assets/ (what /web/ serves). */
  assets: string[];
  pages: PageSize[];
}

function scriptOptions(assetsDir: string): BuildOptions {
  return {
    absWorkingDir: root,
    entryPoints: Object.fromEntries(Object.entries(entries).map(([name, path]) => [name, join(root, path)])),
    bundle: true,
    // Code the pages share (the SDK, the DOM helpers) is one chunk, cached across pages.
    splitting: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    // DOMPurify's licence header stays in the file that carries its code.
    legalComments: 'eof',
    charset: 'utf8',
    chunkNames: 'chunk-[hash]',
    outdir: assetsDir,
    tsconfig: join(root, 'tsconfig.json'),
    metafile: true,
    logLevel: 'warning',
  };
}

function styleOptions(assetsDir: string): BuildOptions {
  return {
    absWorkingDir: root,
    entryPoints: [join(root, 'src/static/style.css')],
    bundle: true,
    minify: true,
    charset: 'utf8',
    outdir: assetsDir,
    logLevel: 'warning',
  };
}

/**
 * The icon, then the shells, which name the files that are not named after their content (the
 * pages' scripts, the stylesheet, the icon) with their content version (`?v=`): the server lets a
 * browser keep such a URL for a year, as it does the chunks, so a page view asks for none of them
 * again until a release changes them.
 */
function writeStatic(outDir: string, fingerprint: boolean): void {
  const assetsDir = join(outDir, 'assets');
  copyFileSync(join(root, 'src/static/icon.svg'), join(assetsDir, 'icon.svg'));
  const versions = new Map(
    readdirSync(assetsDir)
      .filter((name) => fingerprint && !name.startsWith('chunk-'))
      .map((name) => [name, assetVersion(readFileSync(join(assetsDir, name)))]),
  );
  for (const [name, render] of Object.entries(shells))
    writeFileSync(join(outDir, 'pages', `${name}.html`), withAssetVersions(render(), versions));
}

function pageSizes(metafile: Metafile, outDir: string): PageSize[] {
  const relative = (path: string) => path.slice(path.lastIndexOf('/') + 1);
  const byFile = new Map(Object.entries(metafile.outputs).map(([path, output]) => [relative(path), output]));
  return (Object.keys(entries) as PageName[]).map((page) => {
    const scripts: string[] = [];
    const visit = (file: string) => {
      if (scripts.includes(file)) return;
      scripts.push(file);
      for (const imported of byFile.get(file)?.imports ?? [])
        if (imported.kind === 'import-statement') visit(relative(imported.path));
    };
    visit(`${page}.js`);
    const code = scripts.map((file) => readFileSync(join(outDir, 'assets', file)));
    return {
      page,
      scripts,
      bytes: code.reduce((sum, buffer) => sum + buffer.length, 0),
      gzipBytes: code.reduce((sum, buffer) => sum + gzipSync(buffer, { level: 9 }).length, 0),
    };
  });
}

/**
 * Builds everything into `outDir` (default dist/), replacing what was there. Without
 * `fingerprint` the shells name the files without their versions (`dev`: the files change under
 * shells that are rendered once, and a versioned URL would be kept by the browser).
 */
export async function buildWeb(outDir = join(root, 'dist'), { fingerprint = true } = {}): Promise<WebBuild> {
  const assetsDir = join(outDir, 'assets');
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(assetsDir, { recursive: true });
  mkdirSync(join(outDir, 'pages'), { recursive: true });
  const [scripts] = await Promise.all([build(scriptOptions(assetsDir)), build(styleOptions(assetsDir))]);
  writeStatic(outDir, fingerprint);
  const assets = [
    ...Object.keys(scripts.metafile?.outputs ?? {}).map((path) => path.slice(path.lastIndexOf('/') + 1)),
    'style.css',
    'icon.svg',
  ].sort();
  return { outDir, assets, pages: pageSizes(scripts.metafile ?? { inputs: {}, outputs: {} }, outDir) };
}

/** Rebuilds the scripts and the stylesheet into dist/ on every change, until interrupted. */
async function watch(): Promise<void> {
  const outDir = join(root, 'dist');
  await buildWeb(outDir, { fingerprint: false });
  const assetsDir = join(outDir, 'assets');
  for (const options of [scriptOptions(assetsDir), styleOptions(assetsDir)]) {
    const ctx = await context({ ...options, logLevel: 'info' });
    await ctx.watch();
  }
  console.log('watching src/ (restart for changes to the shells in src/shell)');
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} kB`;

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv.includes('--watch')) await watch();
  else {
    const { pages } = await buildWeb();
    for (const { page, scripts, bytes, gzipBytes } of pages)
      console.log(
        `${`/web/${page}.js`.padEnd(20)} ${kb(bytes).padStart(9)} minified, ${kb(gzipBytes).padStart(8)} gzip (${scripts.length} files)`,
      );
  }
}
