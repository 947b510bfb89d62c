import { fillPlaceholders, type SQL } from 'drizzle-orm';
import { embeddedClient } from './engine';
import { PgliteNamedStatement } from './pglite-named-statement';
import type { Db } from './types';

interface Internals {
  dialect: { sqlToQuery(sql: SQL): { sql: string; params: unknown[] } };
  session: {
    prepareQuery(
      query: { sql: string; params: unknown[] },
      fields: undefined,
      name: string,
      arrayMode: boolean,
    ): { execute(values?: Record<string, unknown>): Promise<unknown> };
  };
}

/**
 * A hot path's statement, run as a named prepared statement: it is then parsed and planned once
 * per connection rather than on every call (drizzle's `execute` never prepares). The text is
 * written once with `sql.placeholder(name)` for what varies and compiled once per database
 * handle, so a call only fills in its values: no query building per call. postgres.js prepares
 * by the name; drizzle's PGlite driver ignores it, so on PGlite the statement is kept prepared by
 * PgliteNamedStatement.
 */
export class PreparedStatement<Values extends Record<string, unknown>> {
  private readonly compiled = new WeakMap<Db, { execute(values: Values): Promise<unknown> }>();

  constructor(
    private readonly name: string,
    private readonly query: SQL,
  ) {}

  execute(db: Db, values: Values): Promise<unknown> {
    let prepared = this.compiled.get(db);
    if (!prepared) {
      const internals = db as unknown as Internals;
      const query = internals.dialect.sqlToQuery(this.query);
      const client = embeddedClient(db);
      if (client) {
        const statement = new PgliteNamedStatement(client, this.name, query.sql);
        prepared = { execute: (values) => statement.execute(fillPlaceholders(query.params, values)) };
      } else {
        prepared = internals.session.prepareQuery(query, undefined, this.name, false);
      }
      this.compiled.set(db, prepared);
    }
    return prepared.execute(values);
  }
}
