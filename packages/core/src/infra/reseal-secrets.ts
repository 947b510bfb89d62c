import { sql } from 'drizzle-orm';
import { mintSessionKeys, SESSION_KEYS_SETTING, SESSION_KEYS_UNREADABLE } from '../accounts/session-keys';
import { arrayLiteral } from '../db/array-literal';
import { rowsOf } from '../db/migrate';
import { retryOnDeadlock } from '../db/pg-error';
import type { Db } from '../db/types';
import type { SecretBox } from '../secrets';
import { SECRET_FINGERPRINT_SETTING } from './sealer';

/** A primary-key column: its name and type (the keyset of the batches). */
type KeyColumn = { name: string; type: 'uuid' | 'text' };

/**
 * Every column holding values sealed under SECRET (SecretBox), by table, with the table's primary
 * key. The dashboard's session keys (settings) are resealed by adoptSecret.
 */
const SEALED_COLUMNS: readonly { table: string; column: string; key: readonly KeyColumn[] }[] = [
  {
    table: 'participants',
    column: 'key_enc',
    key: [
      { name: 'space_id', type: 'uuid' },
      { name: 'id', type: 'uuid' },
    ],
  },
  {
    table: 'webhooks',
    column: 'secret_enc',
    key: [
      { name: 'space_id', type: 'uuid' },
      { name: 'id', type: 'uuid' },
    ],
  },
  { table: 'link_requests', column: 'token_enc', key: [{ name: 'id', type: 'uuid' }] },
  { table: 'idempotency_records', column: 'body', key: [{ name: 'scope', type: 'text' }] },
];

/** Rows read, and at most rewritten, per transaction. */
const BATCH = 500;
/** Attempts of a batch chosen as a deadlock's victim (it locks rows requests may hold). */
const DEADLOCK_ATTEMPTS = 5;

/** Where the deployment's SECRET stood when a node started (adoptSecret). */
export type SecretAdoption =
  /** A new database: this node's SECRET is the deployment's from now on. */
  | 'new'
  /** The deployment was already under this node's SECRET. */
  | 'current'
  /** It was under PREVIOUS_SECRET: its session keys and fingerprint are now under SECRET. */
  | 'changed';

/**
 * At start, before anything is sealed or opened: the deployment's SECRET becomes (or stays) this
 * node's, in one transaction. It holds the SECRET's fingerprint row FOR UPDATE throughout, so a
 * node still sealing under the previous SECRET (Sealer.seal takes the row FOR KEY SHARE in its own
 * transaction) either committed before, and its value is resealed by the resealSecrets that
 * follows, or is refused once this commits. The dashboard session keys tell which SECRET the
 * database is under: they are created here on a new database, sealed again when they open with
 * `previous` only, and refused when they open with neither. Nodes starting at once take turns on
 * the row.
 */
export async function adoptSecret(db: Db, box: SecretBox, previous?: SecretBox): Promise<SecretAdoption> {
  return db.transaction(async (tx) => {
    await tx.execute(
      sql`insert into settings (key, value) values (${SECRET_FINGERPRINT_SETTING}, ${box.fingerprint})
        on conflict do nothing`,
    );
    const [fingerprint] = rowsOf<{ value: string }>(
      await tx.execute(sql`select value from settings where key = ${SECRET_FINGERPRINT_SETTING} for update`),
    );
    const [keys] = rowsOf<{ value: string }>(
      await tx.execute(sql`select value from settings where key = ${SESSION_KEYS_SETTING} for update`),
    );
    let adoption: SecretAdoption;
    if (!keys) {
      // A new database: nothing is sealed yet. The keys are made here, with the fingerprint, so
      // that a node started at once with another SECRET finds them and is refused.
      await tx.execute(
        sql`insert into settings (key, value) values (${SESSION_KEYS_SETTING}, ${box.encrypt(mintSessionKeys())})`,
      );
      adoption = 'new';
    } else if (opens(box, keys.value)) {
      adoption = 'current';
    } else if (!previous) {
      throw new Error(SESSION_KEYS_UNREADABLE);
    } else if (!opens(previous, keys.value)) {
      throw new Error(
        'the dashboard session keys in the database open with neither SECRET nor PREVIOUS_SECRET: set PREVIOUS_SECRET to the SECRET this deployment ran with last',
      );
    } else {
      await tx.execute(
        sql`update settings set value = ${box.encrypt(previous.decrypt(keys.value))} where key = ${SESSION_KEYS_SETTING}`,
      );
      adoption = 'changed';
    }
    if (fingerprint?.value !== box.fingerprint)
      await tx.execute(
        sql`update settings set value = ${box.fingerprint} where key = ${SECRET_FINGERPRINT_SETTING}`,
      );
    return adoption;
  });
}

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
 * After a change of SECRET (adoptSecret first): every sealed value that opens with `from` and not
 * with `to` is sealed again with `to`, whatever the session keys say, so what a node left on the
 * previous SECRET sealed meanwhile is found at the next start with PREVIOUS_SECRET. Each table is
 * walked in primary-key order, BATCH rows per transaction, each row locked while it is rewritten:
 * nodes starting at once wait for each other's rows and then find them resealed, and a start cut
 * short leaves the rest for the next (a value resealed already is passed over).
 */
export async function resealSecrets(db: Db, from: SecretBox, to: SecretBox): Promise<Resealed> {
  const total: Resealed = { resealed: 0, unreadable: 0 };
  for (const sealed of SEALED_COLUMNS) {
    let after: string[] | undefined;
    for (;;) {
      const batch = await retryOnDeadlock(DEADLOCK_ATTEMPTS, () => resealBatch(db, sealed, after, from, to));
      total.resealed += batch.resealed;
      total.unreadable += batch.unreadable;
      if (!batch.last) break;
      after = batch.last;
    }
  }
  return total;
}

async function resealBatch(
  db: Db,
  { table, column, key }: (typeof SEALED_COLUMNS)[number],
  after: string[] | undefined,
  from: SecretBox,
  to: SecretBox,
): Promise<Resealed & { last: string[] | undefined }> {
  const keys = sql.join(
    key.map((k) => sql.identifier(k.name)),
    sql`, `,
  );
  const keyText = sql.join(
    key.map((k, i) => sql`${sql.identifier(k.name)}::text as ${sql.identifier(`k${i}`)}`),
    sql`, `,
  );
  const past =
    after === undefined
      ? sql``
      : sql` and (${keys}) > (${sql.join(
          key.map((k, i) => sql`${after[i]}::${sql.raw(k.type)}`),
          sql`, `,
        )})`;
  return db.transaction(async (tx) => {
    const rows = rowsOf<Record<string, string> & { at: string; value: string }>(
      await tx.execute(
        sql`select ctid::text as at, ${keyText}, ${sql.identifier(column)} as value from ${sql.identifier(table)}
          where ${sql.identifier(column)} is not null${past}
          order by ${keys} limit ${BATCH} for update`,
      ),
    );
    const at: string[] = [];
    const values: string[] = [];
    let unreadable = 0;
    for (const row of rows) {
      if (opens(to, row.value)) continue;
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
    // Locked, so their addresses hold until this commits.
    if (at.length > 0)
      await tx.execute(
        sql`update ${sql.identifier(table)} as t set ${sql.identifier(column)} = x.value
          from unnest(${arrayLiteral(at)}::tid[], ${arrayLiteral(values)}::text[]) as x(at, value)
          where t.ctid = x.at`,
      );
    // Walked until a batch finds nothing (a row another transaction emptied while this one waited
    // for it is not returned, so a short batch need not be the last).
    const end = rows.at(-1);
    return { resealed: at.length, unreadable, last: end && key.map((_, i) => end[`k${i}`]!) };
  });
}

function opens(box: SecretBox, sealed: string): boolean {
  try {
    box.decrypt(sealed);
    return true;
  } catch {
    return false;
  }
}
