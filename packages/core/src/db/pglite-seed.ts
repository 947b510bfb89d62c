import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';

/**
 * A new embedded database starts from a snapshot of the cluster PGlite's initdb makes, taken when
 * the package is built (`pnpm --filter @convene/core build`), rather than by running initdb:
 * initdb is a WebAssembly program of its own, which cost a first start 5 to 9 s of CPU here, where
 * unpacking the snapshot costs 1 to 2. The snapshot is the bare cluster, before any migration, so
 * it never falls behind the schema; the server migrates it as it would a cluster initdb made.
 * Without it (a checkout not built yet), initdb runs, as before.
 */
const SEED_DIR = fileURLToPath(new URL('../../pglite-seed/', import.meta.url));

/**
 * Which build of PGlite a snapshot belongs to: the sizes of its WebAssembly and file-system
 * bundle, since a cluster is only readable by the PostgreSQL build that made it, and the package
 * does not export its version. Undefined when PGlite's files cannot be found.
 */
function pgliteBuild(): string | undefined {
  try {
    const dist = dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
    return ['pglite.wasm', 'pglite.data', 'initdb.wasm'].map((f) => statSync(join(dist, f)).size).join('-');
  } catch {
    return undefined;
  }
}

/** Where this build of PGlite's snapshot is, or would be, kept. */
export function pgliteSeedFile(): string | undefined {
  const build = pgliteBuild();
  return build && join(SEED_DIR, `cluster-${build}.tar.gz`);
}

/** The snapshot of a new cluster for this build of PGlite, when the package was built with one. */
export function readPgliteSeed(): Blob | undefined {
  const file = pgliteSeedFile();
  if (!file || !existsSync(file)) return undefined;
  return new Blob([readFileSync(file)]);
}

/** Makes this build of PGlite's snapshot (initdb, then a dump), unless it exists; its path. */
export async function writePgliteSeed(): Promise<string> {
  const file = pgliteSeedFile();
  if (!file) throw new Error('the files of @electric-sql/pglite cannot be found');
  if (existsSync(file)) return file;
  const client = new PGlite();
  await client.waitReady;
  const dump = await client.dumpDataDir('gzip');
  await client.close();
  mkdirSync(SEED_DIR, { recursive: true });
  const partial = `${file}.${process.pid}`;
  writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
  renameSync(partial, file);
  return file;
}
