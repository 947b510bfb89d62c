import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type * as schema from './schema';

export type Schema = typeof schema;
/** Either driver's drizzle instance: both are PgDatabase underneath. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
/** A transaction handle; use cases accept it wherever they accept a Db. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
export type Executor = Db | Tx;
