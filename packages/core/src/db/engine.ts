import { PGlite } from '@electric-sql/pglite';
import type { Db } from './types';

/** The PGlite instance under `db`, when it is the embedded database; undefined on PostgreSQL. */
export function embeddedClient(db: Db): PGlite | undefined {
  const client = (db as unknown as { $client: unknown }).$client;
  return client instanceof PGlite ? client : undefined;
}

/** Whether `db` is the embedded database (PGlite, in this process) rather than a PostgreSQL server. */
export const isEmbedded = (db: Db): boolean => embeddedClient(db) !== undefined;
