import { PGlite } from '@electric-sql/pglite';
import type { Db } from './types';

/** Whether `db` is the embedded database (PGlite, in this process) rather than a PostgreSQL server. */
export const isEmbedded = (db: Db): boolean =>
  (db as unknown as { $client: unknown }).$client instanceof PGlite;
