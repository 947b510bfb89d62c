/**
 * Measures what the SDK costs a browser bundle: src/index.ts with eventsource-parser bundled in,
 * minified, as one ESM file, then gzipped. `pnpm --filter @convene/sdk size` prints it;
 * test/unit/package.test.ts holds it under 15,000 bytes and checks that no zod, contract, core, server,
 * drizzle or tRPC code and no Node built-in made it in.
 */

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'tsdown';

const packageRoot = join(dirname(fileURLToPath(import.meta.url)), '..');

export interface BundleSize {
  /** The minified bundle itself (an ES module). */
  code: string;
  minifiedBytes: number;
  gzipBytes: number;
  /** Every module in the bundle, relative to the package (dependencies under node_modules). */
  modules: string[];
  /** Imports left outside the bundle. */
  imports: string[];
}

export async function measureBundle(): Promise<BundleSize> {
  const [bundle] = await build({
    config: false,
    cwd: packageRoot,
    entry: ['src/index.ts'],
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    tsconfig: 'tsconfig.build.json',
    minify: true,
    dts: false,
    write: false,
    clean: false,
    deps: { alwaysBundle: [/./], onlyBundle: false },
    logLevel: 'silent',
  });
  const chunk = bundle?.chunks.find((c) => c.type === 'chunk');
  if (chunk?.type !== 'chunk') throw new Error('the build produced no chunk');
  return {
    code: chunk.code,
    minifiedBytes: Buffer.byteLength(chunk.code),
    gzipBytes: gzipSync(chunk.code, { level: 9 }).length,
    modules: chunk.moduleIds.map((id) => id.replace(`${packageRoot}/`, '')),
    imports: chunk.imports,
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const size = await measureBundle();
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} kB (${bytes.toLocaleString('en-US')} bytes)`;
  console.log(
    `@convene/sdk, minified with its dependencies: ${kb(size.minifiedBytes)}, gzip ${kb(size.gzipBytes)}`,
  );
  console.log(
    `modules: ${size.modules.length} (${size.modules.filter((m) => m.includes('node_modules')).length} from dependencies)`,
  );
}
