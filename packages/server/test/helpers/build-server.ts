import { readdir, readFile, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { writePgliteSeed } from '@convene/core';
import { build, type Plugin } from 'esbuild';
import { serverBundle, serverRoot } from './process';

/**
 * Vitest global setup: bundles the server's entry point (src/main.ts) once for the run, for the
 * tests that start it as a process. Through tsx, each start spent 3.5 s more CPU compiling and
 * loading the sources, and the suites start about forty.
 */
export default async function setup(): Promise<void> {
  await buildServer(serverBundle);
}

/** Bundles src/main.ts into `outfile` (the SDK's suite builds its own copy, to start its servers). */
export async function buildServer(outfile: string): Promise<void> {
  // What a new embedded database starts from, as turbo's build of core makes it (a bare vitest may not have).
  await writePgliteSeed();
  const { metafile } = await build({
    entryPoints: [join(serverRoot, 'src/main.ts')],
    // In chunks beside it, as the CLI's build splits it: what the server imports only when first
    // needed (the MCP runtime, mcp/http.ts) stays unloaded until then, where one file would load
    // its packages at the start.
    outdir: dirname(outfile),
    entryNames: basename(outfile, '.mjs'),
    chunkNames: 'chunks/[name]-[hash]',
    outExtension: { '.js': '.mjs' },
    splitting: true,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'warning',
    metafile: true,
    plugins: [workspaceSourcesOnly],
  });
  // The chunks of earlier builds, which no entry imports now (their hashes changed): gone. A build
  // running beside this one, of the same sources, writes the same names.
  const chunks = join(dirname(outfile), 'chunks');
  const current = new Set(Object.keys(metafile.outputs).map((output) => basename(output)));
  for (const name of await readdir(chunks).catch(() => [])) {
    if (!current.has(name)) await rm(join(chunks, name), { force: true });
  }
}

/**
 * The workspace's TypeScript is bundled; every package from node_modules stays outside, imported
 * from the file it resolves to (the patched copies, each package's own dependencies), so that the
 * bundle loads exactly what tsx would. A workspace module finding files beside it through
 * `import.meta.url` (migrations, the pages, the guides, the diff worker) keeps its own URL.
 */
const workspaceSourcesOnly: Plugin = {
  name: 'convene:workspace-sources-only',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.pluginData === 'resolving' || args.path.startsWith('@convene/')) return undefined;
      if (args.path.startsWith('node:')) return { path: args.path, external: true };
      const resolved = await b.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        importer: args.importer,
        pluginData: 'resolving',
      });
      if (resolved.errors.length > 0) return { errors: resolved.errors };
      return { path: resolved.path, external: true };
    });
    b.onLoad({ filter: /\.[cm]?[jt]s$/ }, async (args) => {
      if (args.path.includes('/node_modules/')) return undefined;
      const text = await readFile(args.path, 'utf8');
      if (!text.includes('import.meta.url')) return undefined;
      return {
        contents: text.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)),
        loader: args.path.endsWith('.ts') ? 'ts' : 'js',
      };
    });
  },
};
