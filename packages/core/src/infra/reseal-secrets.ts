import { sql } from 'drizzle-orm';
import { SESSION_KEYS_SETTING } from '../accounts/session-keys';
import { arrayLiteral } from '../db/array-literal';
import { rowsOf } from '../db/migrate';
import type { Db, Tx } from '../db/types';
import type { SecretBox } from '../secrets';

/** Every column holding values sealed under SECRET (SecretBox), by table. */
const SEALED_COLUMNS = [
  { table: 'participants', column: 'key_enc' },
  { table: 'webhooks', column: 'secret_enc' },
  { table: 'link_requests', column: 'token_enc' },
  { table: 'idempotency_records', column: 'body' },
  { table: 'settings', column: 'value', only: SESSION_KEYS_SETTING },
] as const;

/** Rows rewritten per statement. */
const BATCH = 500;

export interface Resealed {
  /** Values opened with the previous SECRET and sealed again with the current one. */
  resealed: number;
  /**
   * Values neither opens, left as they are (their features then fail for those rows alone, as
   * before): none in a deployment whose every node shared the previous SECRET.
   */
  unreadable: number;
}

/**
 * After a change of SECRET: every sealed value is opened with the previous one and sealed again
 * with the current one, in one transaction. The dashboard's session keys tell which SECRET the
 * database is under: when they already open with the current one there is nothing to do (a node
 * started with it first), and when neither opens them `from` is not the previous SECRET. Nodes
 * starting at once take turns on the session keys' row, so one of them reseals.
 */
export async function resealSecrets(db: Db, from: SecretBox, to: SecretBox): Promise<Resealed | undefined> {
  return db.transaction(async (tx) => {
    const [keys] = rowsOf<{ value: string }>(
      await tx.execute(sql`select value from settings where key = ${SESSION_KEYS_SETTING} for update`),
    );
    // A new database: nothing is sealed yet.
    if (!keys || opens(to, keys.value)) return undefined;
    if (!opens(from, keys.value))
      throw new Error(
        'the dashboard session keys in the database open with neither SECRET nor PREVIOUS_SECRET: set PREVIOUS_SECRET to the SECRET this deployment ran with last',
      );
    const total: Resealed = { resealed: 0, unreadable: 0 };
    for (const { table, column, ...rest } of SEALED_COLUMNS) {
      const done = await resealColumn(tx, table, column, 'only' in rest ? rest.only : undefined, from, to);
      total.resealed += done.resealed;
      total.unreadable += done.unreadable;
    }
    return total;
  });
}

async function resealColumn(
  tx: Tx,
  table: string,
  column: string,
  onlyKey: string | undefined,
  from: SecretBox,
  to: SecretBox,
): Promise<Resealed> {
  const where = onlyKey === undefined ? sql`` : sql` and key = ${onlyKey}`;
  const rows = rowsOf<{ at: string; value: string }>(
    await tx.execute(
      sql`select ctid::text as at, ${sql.identifier(column)} as value from ${sql.identifier(table)}
        where ${sql.identifier(column)} is not null${where} for update`,
    ),
  );
  const at: string[] = [];
  const values: string[] = [];
  let unreadable = 0;
  for (const row of rows) {
    let plain: string;
    try {
      plain = from.decrypt(row.value);
    } catch {
      unreadable++;
      continue;
    }
    at.push(row.at);
    values.push(to.encrypt(plain));
  }
  for (let i = 0; i < at.length; i += BATCH) {
    await tx.execute(
      sql`update ${sql.identifier(table)} as t set ${sql.identifier(column)} = x.value
        from unnest(${arrayLiteral(at.slice(i, i + BATCH))}::tid[], ${arrayLiteral(values.slice(i, i + BATCH))}::text[])
          as x(at, value)
        where t.ctid = x.at`,
    );
  }
  return { resealed: at.length, unreadable };
}

function opens(box: SecretBox, sealed: string): boolean {
  try {
    box.decrypt(sealed);
    return true;
  } catch {
    return false;
  }
}
