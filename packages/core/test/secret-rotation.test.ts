import { sql } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rowsOf } from '../src/db/migrate';
import { UnavailableError } from '../src/errors';
import { adoptSecret, resealSecrets } from '../src/infra/reseal-secrets';
import { SECRET_FINGERPRINT_SETTING, Sealer } from '../src/infra/sealer';
import { SecretBox } from '../src/secrets';
import { openTestDatabase, type TestDatabase } from '../src/testing';

const OLD = new SecretBox('old-secret-0123456789abcdef');
const NEW = new SecretBox('new-secret-0123456789abcdef');

let t: TestDatabase;
beforeEach(async () => {
  t = await openTestDatabase();
});
afterEach(() => t?.close());

const db = () => t.database.db;

/** Idempotency records whose bodies are `sealed` (the table without foreign keys): their scopes. */
async function storeBodies(prefix: string, bodies: string[]): Promise<string[]> {
  const scopes = bodies.map((_, i) => `${prefix}-${String(i).padStart(5, '0')}`);
  const expires = new Date(Date.now() + 86_400_000).toISOString();
  for (let i = 0; i < bodies.length; i += 200)
    await db().execute(sql`
      insert into idempotency_records (scope, request_hash, state, status, headers, body, created_at, expires_at)
      select s, 'h', 'done', 200, '{}'::jsonb, b, now(), ${expires}::timestamptz
      from unnest(${`{${scopes.slice(i, i + 200).join(',')}}`}::text[], ${`{${bodies
        .slice(i, i + 200)
        .map((b) => `"${b}"`)
        .join(',')}}`}::text[]) as x(s, b)`);
  return scopes;
}

async function bodyOf(scope: string): Promise<string> {
  const [row] = rowsOf<{ body: string }>(
    await db().execute(sql`select body from idempotency_records where scope = ${scope}`),
  );
  return row!.body;
}

async function fingerprint(): Promise<string | undefined> {
  const [row] = rowsOf<{ value: string }>(
    await db().execute(sql`select value from settings where key = ${SECRET_FINGERPRINT_SETTING}`),
  );
  return row?.value;
}

describe('adoptSecret', () => {
  it('makes the first SECRET the deployment’s, keeps it, moves to a new one only with the previous one, and refuses any other', async () => {
    expect(await adoptSecret(db(), OLD)).toBe('new');
    expect(await fingerprint()).toBe(OLD.fingerprint);
    expect(await adoptSecret(db(), OLD)).toBe('current');
    await expect(adoptSecret(db(), NEW)).rejects.toThrow(/cannot be read with this SECRET/);
    const stranger = new SecretBox('stranger-secret-0123456789');
    await expect(adoptSecret(db(), NEW, stranger)).rejects.toThrow(/neither SECRET nor PREVIOUS_SECRET/);
    // Refused: the deployment stays under the old SECRET.
    expect(await fingerprint()).toBe(OLD.fingerprint);
    expect(await adoptSecret(db(), NEW, OLD)).toBe('changed');
    expect(await fingerprint()).toBe(NEW.fingerprint);
    expect(await adoptSecret(db(), NEW, OLD)).toBe('current');
    await expect(adoptSecret(db(), OLD)).rejects.toThrow(/cannot be read with this SECRET/);
  });
});

describe('resealSecrets', () => {
  it('reseals every value sealed under the previous SECRET, in batches, also those sealed after the change (by a node left on the old one), and only once', async () => {
    await adoptSecret(db(), OLD);
    // More than two batches of 500.
    const before = await storeBodies(
      'before',
      Array.from({ length: 1_100 }, (_, i) => OLD.encrypt(`b${i}`)),
    );
    const [damaged] = await storeBodies('damaged', ['v1.not.a.value']);
    expect(await adoptSecret(db(), NEW, OLD)).toBe('changed');
    expect(await resealSecrets(db(), OLD, NEW)).toEqual({ resealed: 1_100, unreadable: 1 });
    for (const [i, scope] of before.entries()) expect(NEW.decrypt(await bodyOf(scope))).toBe(`b${i}`);
    expect(await bodyOf(damaged!)).toBe('v1.not.a.value');

    // A node still on the old SECRET sealed more afterwards (one of a version that did not check):
    // the session keys already open with the new SECRET, and they are found all the same.
    const after = await storeBodies('after', [
      OLD.encrypt('late-1'),
      NEW.encrypt('new-1'),
      OLD.encrypt('late-2'),
    ]);
    expect(await adoptSecret(db(), NEW, OLD)).toBe('current');
    expect(await resealSecrets(db(), OLD, NEW)).toEqual({ resealed: 2, unreadable: 1 });
    expect(await Promise.all(after.map(async (scope) => NEW.decrypt(await bodyOf(scope))))).toEqual([
      'late-1',
      'new-1',
      'late-2',
    ]);
    expect(await resealSecrets(db(), OLD, NEW)).toEqual({ resealed: 0, unreadable: 1 });
  });

  it('reseals each value once when nodes start at once', async () => {
    await adoptSecret(db(), OLD);
    const scopes = await storeBodies(
      'both',
      Array.from({ length: 700 }, (_, i) => OLD.encrypt(`v${i}`)),
    );
    const [a, b] = await Promise.all([
      adoptSecret(db(), NEW, OLD).then(() => resealSecrets(db(), OLD, NEW)),
      adoptSecret(db(), NEW, OLD).then(() => resealSecrets(db(), OLD, NEW)),
    ]);
    expect(a!.resealed + b!.resealed).toBe(700);
    for (const [i, scope] of scopes.entries()) expect(NEW.decrypt(await bodyOf(scope))).toBe(`v${i}`);
  });
});

describe('Sealer', () => {
  it('refuses to seal (503) once the deployment’s SECRET is no longer its own, and says so once', async () => {
    await adoptSecret(db(), OLD);
    const said: string[] = [];
    const stale = new Sealer(OLD, { onStale: (message) => void said.push(message) });
    expect(OLD.decrypt(await stale.seal(db(), 'before'))).toBe('before');
    await adoptSecret(db(), NEW, OLD);
    for (let i = 0; i < 3; i++) {
      const refused = await stale.seal(db(), 'after').catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(UnavailableError);
    }
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/restarted with the new SECRET/);
    // The node on the new SECRET seals.
    expect(NEW.decrypt(await new Sealer(NEW).seal(db(), 'x'))).toBe('x');
  });

  it('opens a value sealed under PREVIOUS_SECRET and seals it again; a stale node’s failure to open is 503, a damaged value’s is not', async () => {
    await adoptSecret(db(), OLD);
    const [scope] = await storeBodies('open', [OLD.encrypt('kept')]);
    await adoptSecret(db(), NEW, OLD);
    const sealer = new Sealer(NEW, { previous: OLD });
    const stored = await bodyOf(scope!);
    const opened = await sealer.open(db(), stored, (ex, fresh) =>
      ex.execute(
        sql`update idempotency_records set body = ${fresh} where scope = ${scope!} and body = ${stored}`,
      ),
    );
    expect(opened).toBe('kept');
    expect(NEW.decrypt(await bodyOf(scope!))).toBe('kept');
    // Inside a transaction the reseal is a savepoint: one that fails leaves the value, and the
    // transaction, as they were.
    const [other] = await storeBodies('in-tx', [OLD.encrypt('also kept')]);
    const otherStored = await bodyOf(other!);
    const inTx = await db().transaction(async (tx) => {
      // A statement that fails: on PostgreSQL it would abort the transaction, but for the savepoint.
      const failed = await sealer.open(tx, otherStored, (ex) => ex.execute(sql`select 1 / 0`));
      const resealed = await sealer.open(tx, otherStored, (ex, fresh) =>
        ex.execute(sql`update idempotency_records set body = ${fresh} where scope = ${other!}`),
      );
      return [failed, resealed];
    });
    expect(inTx).toEqual(['also kept', 'also kept']);
    expect(NEW.decrypt(await bodyOf(other!))).toBe('also kept');
    // Without PREVIOUS_SECRET it would not open.
    await expect(new Sealer(NEW).open(db(), stored)).rejects.not.toBeInstanceOf(UnavailableError);

    const stale = new Sealer(OLD);
    await expect(stale.open(db(), await bodyOf(scope!))).rejects.toBeInstanceOf(UnavailableError);
    await expect(sealer.open(db(), 'v1.not.a.value')).rejects.toThrow(/unreadable|authenticate|Invalid/);
    await expect(sealer.open(db(), 'v1.not.a.value')).rejects.not.toBeInstanceOf(UnavailableError);
  });

  it.runIf(Boolean(process.env.TEST_DATABASE_URL))(
    'a change of SECRET waits for a transaction sealing under the old one, whose value it then reseals, and refuses those after it',
    async () => {
      await adoptSecret(db(), OLD);
      const stale = new Sealer(OLD);
      let release: () => void = () => {};
      let sealed = false;
      const writing = db().transaction(async (tx) => {
        const body = await stale.seal(tx, 'in flight');
        await tx.execute(sql`
          insert into idempotency_records (scope, request_hash, state, status, headers, body, created_at, expires_at)
          values ('in-flight', 'h', 'done', 200, '{}'::jsonb, ${body}, now(), now() + interval '1 day')`);
        sealed = true;
        await new Promise<void>((resolve) => (release = resolve));
      });
      await expect.poll(() => sealed).toBe(true);
      let adopted = false;
      const changing = adoptSecret(db(), NEW, OLD).then((state) => {
        adopted = true;
        return state;
      });
      // The change waits for the sealing transaction.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(adopted).toBe(false);
      release();
      await writing;
      expect(await changing).toBe('changed');
      expect(await resealSecrets(db(), OLD, NEW)).toMatchObject({ resealed: 1 });
      expect(NEW.decrypt(await bodyOf('in-flight'))).toBe('in flight');
      await expect(db().transaction((tx) => stale.seal(tx, 'late'))).rejects.toBeInstanceOf(UnavailableError);
    },
  );
});
