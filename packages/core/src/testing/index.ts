import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/pglite';
import postgres from 'postgres';
import { type Database, openDatabase, writePgliteSeed } from '../db';
import { embeddedClient } from '../db/engine';
import * as schema from '../db/schema';
import type { Db } from '../db/types';

/**
 * What the processes a test starts (servers, the CLI under test, examples) go without: every Node
 * process parses the file NODE_EXTRA_CA_CERTS names as it starts, and machines that point it at the
 * system's whole certificate store pay about 80 ms of CPU a start, a fifth of the CLI suite's CPU.
 * Those processes speak plain HTTP to loopback. npm, which the package tests run against the
 * registry, keeps it.
 */
export const CHILD_ENV_DROPPED = ['NODE_EXTRA_CA_CERTS'] as const;

/** The runner's environment for a process a test starts, without `CHILD_ENV_DROPPED`, `env` over it. */
export function childEnv(env: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const base = { ...process.env };
  for (const name of CHILD_ENV_DROPPED) delete base[name];
  return { ...base, ...env };
}

/**
 * Test databases: PGlite by default (cloned from one migrated dump, so each is ready in
 * milliseconds), or a fresh database on the PostgreSQL server named by TEST_DATABASE_URL.
 */
export const testDatabaseServerUrl = (): string | undefined => process.env.TEST_DATABASE_URL || undefined;

let dump: Promise<Blob> | undefined;
/**
 * The migrated PGlite cluster every test instance starts from: the build's snapshot a new
 * embedded database starts from (made here when the package was not built), unpacked once.
 */
export const migratedPgliteDump = (): Promise<Blob> => {
  dump ??= writePgliteSeed().then((file) => new Blob([gunzipSync(readFileSync(file))]));
  return dump;
};

/** A fresh, empty, migrated PostgreSQL database on the test server; dropped by the returned function. */
export async function createPostgresTestDatabase(
  serverUrl: string,
): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `convene_test_${randomBytes(6).toString('hex')}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const a = postgres(serverUrl, { max: 1, onnotice: () => {} });
      await a.unsafe(`drop database if exists ${name} with (force)`);
      await a.end();
    },
  };
}

export interface TestDatabase {
  database: Database;
  /** The URL a second node would open to share this database (PostgreSQL only). */
  url: string | undefined;
  close(): Promise<void>;
}

export async function openTestDatabase(): Promise<TestDatabase> {
  const serverUrl = testDatabaseServerUrl();
  if (serverUrl) {
    const pg = await createPostgresTestDatabase(serverUrl);
    const database = await openDatabase({ url: pg.url, maxConnections: 5 });
    return {
      database,
      url: pg.url,
      async close() {
        await database.close();
        await pg.drop();
      },
    };
  }
  const database = await openDatabase({
    url: 'memory://',
    loadDataDir: await migratedPgliteDump(),
    migrate: false,
  });
  return { database, url: undefined, close: () => database.close() };
}

/** This process's PGlite databases that nobody has leased: emptied, ready for the next lease. */
const idlePglites: Database[] = [];

/**
 * A PGlite database as new (migrated, every table empty) for a test server, taken from this
 * process's idle ones or opened from the migrated dump; closing it empties it and makes it idle
 * again. Opening one costs 1.5 s of CPU (a database on the test PostgreSQL, 0.2 s), and a test
 * process starts dozens of servers. Each lease has a handle of its own: what core keeps per
 * handle (the participants' views, the batchers, prepared statements) starts afresh with it.
 */
export async function leasedPglite(): Promise<Database> {
  const database =
    idlePglites.pop() ??
    (await openDatabase({ url: 'memory://', loadDataDir: await migratedPgliteDump(), migrate: false }));
  const client = embeddedClient(database.db)!;
  const db = drizzle(client, { schema }) as unknown as Db;
  /** Its listeners that its server has not removed, removed at its close. */
  const listening = new Set<() => Promise<void>>();
  let closed = false;
  return {
    db,
    engine: database.engine,
    async listen(channel, onPayload, onReconnect) {
      const unlisten = await database.listen(channel, onPayload, onReconnect);
      const remove = async () => {
        if (listening.delete(remove)) await unlisten();
      };
      listening.add(remove);
      return remove;
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const remove of [...listening]) await remove();
      // Every table but the journal of applied migrations.
      await db.execute(sql`
        do $$ begin
          execute (select 'truncate ' || string_agg(format('%I', tablename), ', ') || ' restart identity cascade'
                   from pg_tables where schemaname = 'public' and tablename <> 'convene_migrations');
        end $$`);
      // The next lease's handle prepares its statements again, under the same names.
      await db.execute(sql`deallocate all`);
      await db.execute(sql`select pg_advisory_unlock_all()`);
      idlePglites.push(database);
    },
  };
}
