import { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { lockDataDir } from './data-dir-lock';
import { migrate } from './migrate';
import * as schema from './schema';
import type { Db } from './types';

export * from './data-dir-lock';
export { migrate, migrationsFolder, rowsOf } from './migrate';
export { isDatabaseUnavailable } from './pg-error';
export * as schema from './schema';
export type { Db, Executor, Schema, Tx } from './types';

export type Notification = (payload: string) => void;

/** An open database of either engine, with the few engine-specific needs behind one face. */
export interface Database {
  readonly db: Db;
  readonly engine: 'postgres' | 'pglite';
  /** LISTEN on a channel; NOTIFY is sent with `pg_notify` inside the writing transaction. */
  listen(channel: string, onPayload: Notification): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** `postgres://…`, `memory://`, or undefined for PGlite under `dataDir`. */
  url?: string | undefined;
  dataDir?: string | undefined;
  /** Pool size for PostgreSQL. */
  maxConnections?: number | undefined;
  /** A PGlite data directory dump to start from (tests clone one migrated instance). */
  loadDataDir?: Blob | File | undefined;
  /** Run migrations (default true). */
  migrate?: boolean | undefined;
}

export async function openDatabase(options: OpenDatabaseOptions = {}): Promise<Database> {
  const url = options.url;
  const database =
    url && /^postgres(ql)?:\/\//.test(url)
      ? openPostgres(url, options.maxConnections ?? 10)
      : await openPglite(
          url === 'memory://' ? undefined : (options.dataDir ?? './.data'),
          options.loadDataDir,
        );
  if (options.migrate !== false) await migrate(database.db);
  return database;
}

function openPostgres(url: string, max: number): Database {
  const client = postgres(url, { max, onnotice: () => {}, connection: { application_name: 'convene' } });
  const db = drizzlePostgres(client, { schema }) as unknown as Db;
  return {
    db,
    engine: 'postgres',
    async listen(channel, onPayload) {
      const sub = await client.listen(channel, onPayload);
      return () => sub.unlisten();
    },
    close: () => client.end({ timeout: 5 }),
  };
}

async function openPglite(
  dataDir: string | undefined,
  loadDataDir: Blob | File | undefined,
): Promise<Database> {
  const unlock = dataDir ? lockDataDir(dataDir) : () => {};
  try {
    const client = new PGlite({
      ...(dataDir ? { dataDir } : {}),
      ...(loadDataDir ? { loadDataDir } : {}),
    });
    await client.waitReady;
    const db = drizzlePglite(client, { schema }) as unknown as Db;
    return {
      db,
      engine: 'pglite',
      async listen(channel, onPayload) {
        const unlisten = await client.listen(channel, onPayload);
        return () => unlisten();
      },
      async close() {
        await client.close();
        unlock();
      },
    };
  } catch (error) {
    unlock();
    throw error;
  }
}

/** Dump a migrated in-memory PGlite so test files can start from a copy in milliseconds. */
export async function dumpMigratedPglite(): Promise<Blob> {
  const client = new PGlite();
  await client.waitReady;
  await migrate(drizzlePglite(client, { schema }) as unknown as Db);
  const dump = await client.dumpDataDir('none');
  await client.close();
  return dump;
}
