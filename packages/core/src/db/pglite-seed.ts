import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import { parseTar } from 'nanotar';
import { migrate, migrationsFolder } from './migrate';
import * as schema from './schema';
import type { Db } from './types';

/**
 * A new embedded database starts from a snapshot of a new cluster with every migration of this
 * build applied, taken when the package is built (`pnpm --filter @convene/core build`), rather than
 * by running initdb and then the migrations: initdb is a WebAssembly program of its own, which cost
 * a first start 5 to 9 s of CPU here, where unpacking the snapshot costs 1 to 2. The tests start
 * their databases from the same file. It is named by the migrations it holds, so it never stands
 * for another schema: a build whose migrations changed makes its own. Without one (a checkout not
 * built yet), initdb and the migrations run, as before.
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

/** Which migrations a snapshot holds: a hash of their files' names and content. */
function migrationsHash(): string {
  const hash = createHash('sha256');
  for (const file of readdirSync(migrationsFolder, { recursive: true }).map(String).sort()) {
    if (file.endsWith('.sql') || file.endsWith('.json'))
      hash.update(file).update(readFileSync(join(migrationsFolder, file)));
  }
  return hash.digest('hex').slice(0, 16);
}

/** Where this build's snapshot (its PGlite, its migrations) is, or would be, kept. */
export function pgliteSeedFile(): string | undefined {
  const build = pgliteBuild();
  return build && join(SEED_DIR, `cluster-${build}-${migrationsHash()}.tar.gz`);
}

/** This build's snapshot's file, when the package was built with one. */
function builtPgliteSeed(): string | undefined {
  const file = pgliteSeedFile();
  return file && existsSync(file) ? file : undefined;
}

/** The snapshot of a new, migrated cluster for this build, when the package was built with one. */
export function readPgliteSeed(): Blob | undefined {
  const file = builtPgliteSeed();
  if (!file) return undefined;
  // Typed, PGlite unpacks it at once instead of trying it as a bare tar first.
  return new Blob([readFileSync(file)], { type: 'application/gzip' });
}

/** The file that marks a directory as holding a cluster: see unpackPgliteSeed. */
export const CLUSTER_MARK = 'PG_VERSION';

/**
 * Writes this build's snapshot into `dataDir`, a data directory without a cluster, with Node's own
 * zlib and file writes: 0.5 s here, where PGlite's loadDataDir wrote the same 1,100 files through
 * its emulated file system in 1.5 to 2.5 s of a first start. Files 0600, directories 0700, as
 * PostgreSQL keeps them. `CLUSTER_MARK` goes last: a start stopped midway finds no cluster, and
 * unpacks again over what it wrote. False when the package was built without a snapshot.
 */
export function unpackPgliteSeed(dataDir: string): boolean {
  const file = builtPgliteSeed();
  if (!file) return false;
  let mark: Uint8Array | undefined;
  for (const entry of parseTar(gunzipSync(readFileSync(file)))) {
    const path = resolve(dataDir, entry.name.replace(/^\/+/, ''));
    const inside = relative(dataDir, path);
    if (inside.startsWith('..'))
      throw new Error(`the PGlite snapshot names a path outside its directory: ${entry.name}`);
    if (entry.type === 'directory') mkdirSync(path, { recursive: true, mode: 0o700 });
    else if (inside === CLUSTER_MARK) mark = entry.data;
    else writeFileSync(path, entry.data ?? new Uint8Array(), { mode: 0o600 });
  }
  if (!mark) throw new Error(`the PGlite snapshot ${file} holds no ${CLUSTER_MARK}`);
  writeFileSync(join(dataDir, CLUSTER_MARK), mark, { mode: 0o600 });
  return true;
}

/**
 * Makes this build's snapshot (initdb, the migrations, then a dump), unless it exists, and removes
 * those of other builds; its path.
 */
export async function writePgliteSeed(): Promise<string> {
  const file = pgliteSeedFile();
  if (!file) throw new Error('the files of @electric-sql/pglite cannot be found');
  if (existsSync(file)) return file;
  const client = new PGlite();
  await client.waitReady;
  await migrate(drizzle(client, { schema }) as unknown as Db);
  const dump = await client.dumpDataDir('gzip');
  await client.close();
  mkdirSync(SEED_DIR, { recursive: true });
  const partial = `${file}.${process.pid}`;
  writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
  renameSync(partial, file);
  for (const name of readdirSync(SEED_DIR))
    if (/^cluster-.*\.tar\.gz$/.test(name) && join(SEED_DIR, name) !== file)
      rmSync(join(SEED_DIR, name), { force: true });
  return file;
}
