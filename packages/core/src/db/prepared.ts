import type { SQL } from 'drizzle-orm';
import type { Db } from './types';

/**
 * Runs a statement as a named prepared statement: a hot path's statement is then parsed and
 * planned once per connection rather than on every call (drizzle's `execute` never prepares).
 * Both drivers' sessions take the name; PGlite simply ignores it. The statement's text must not
 * vary between calls under one name.
 */
export function executePrepared(db: Db, name: string, query: SQL): Promise<unknown> {
  const internals = db as unknown as {
    dialect: { sqlToQuery(sql: SQL): { sql: string; params: unknown[] } };
    session: {
      prepareQuery(
        query: { sql: string; params: unknown[] },
        fields: undefined,
        name: string,
        arrayMode: boolean,
      ): { execute(): Promise<unknown> };
    };
  };
  return internals.session
    .prepareQuery(internals.dialect.sqlToQuery(query), undefined, name, false)
    .execute();
}
