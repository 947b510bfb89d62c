import { randomBytes, scryptSync } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Database, isMemoryUrl, SecretBox, schema } from '@convene/core';
import { eq } from 'drizzle-orm';
import type { ServerConfig } from './env';

/** Settings rows: the generated SECRET sealed, and where earlier versions kept it in clear. */
const SEALED = 'secret-sealed';
const CLEAR = 'secret';

/**
 * The key a generated SECRET is sealed with in PostgreSQL: derived (scrypt, so that a copy of the
 * database does not make a weak password cheap to guess) from the database password every node
 * connects with. A dump, a backup or a replica of the data without that password cannot open it.
 */
function sealWith(password: string): SecretBox {
  const key = scryptSync(password, 'convene:generated-secret:v1', 32, {
    N: 32_768,
    r: 8,
    p: 1,
    maxmem: 64 * 1024 * 1024,
  });
  return new SecretBox(key.toString('hex'));
}

const mint = (): string => randomBytes(32).toString('hex');

/**
 * SECRET unset: generated once and kept under DATA_DIR (embedded PGlite, a file of mode 0600) or
 * in the database (PostgreSQL), so every node sharing the database agrees on it. In the database
 * it is sealed under a key derived from the database password. A DATABASE_URL without a password
 * (trust or peer authentication) leaves nothing to seal it with: it is then kept as it is, with a
 * warning, rather than refusing to start a deployment that decisions.md says needs no SECRET.
 */
export async function loadOrCreateSecret(
  database: Database,
  config: ServerConfig,
  warn: (message: string) => void,
): Promise<string> {
  if (isMemoryUrl(config.databaseUrl)) return mint();
  if (database.engine === 'pglite') {
    const file = join(config.dataDir, 'secret');
    try {
      return readFileSync(file, 'utf8').trim();
    } catch {
      mkdirSync(config.dataDir, { recursive: true });
      const secret = mint();
      writeFileSync(file, secret, { mode: 0o600 });
      return secret;
    }
  }
  const db = database.db;
  const read = async (key: string) =>
    (
      await db
        .select({ value: schema.settings.value })
        .from(schema.settings)
        .where(eq(schema.settings.key, key))
    )[0]?.value;
  const password = config.databasePassword;
  if (!password) {
    warn(
      'SECRET is unset and DATABASE_URL names no password to seal the generated one with: it is kept unsealed in the database, so a copy of the database opens the keys it protects. Set SECRET (64 random hex characters, the same on every node) or connect with a password.',
    );
    if (await read(SEALED))
      throw new Error(
        'the generated SECRET in the database is sealed with a database password, and DATABASE_URL names none: connect with that password, or set SECRET',
      );
    await db.insert(schema.settings).values({ key: CLEAR, value: mint() }).onConflictDoNothing();
    const clear = await read(CLEAR);
    if (!clear) throw new Error('could not load the server secret');
    return clear;
  }
  const box = sealWith(password);

  // A secret an earlier version kept in clear is sealed now, and its clear copy removed.
  const clear = await read(CLEAR);
  const candidate = clear ?? mint();
  await db
    .insert(schema.settings)
    .values({ key: SEALED, value: box.encrypt(candidate) })
    .onConflictDoNothing();
  const sealed = await read(SEALED);
  if (!sealed) throw new Error('could not load the server secret');
  let secret: string;
  try {
    secret = box.decrypt(sealed);
  } catch {
    secret = reseal(sealed, config);
    await db
      .update(schema.settings)
      .set({ value: box.encrypt(secret) })
      .where(eq(schema.settings.key, SEALED));
  }
  if (clear !== undefined) await db.delete(schema.settings).where(eq(schema.settings.key, CLEAR));
  return secret;
}

/** After a change of the database password: opened with the previous one, sealed with the new. */
function reseal(sealed: string, config: ServerConfig): string {
  if (config.previousDatabasePassword) {
    try {
      return sealWith(config.previousDatabasePassword).decrypt(sealed);
    } catch {
      // Neither password opens it: answered below.
    }
  }
  throw new Error(
    'the generated SECRET in the database is sealed with another database password: start once with PREVIOUS_DATABASE_PASSWORD set to the password it was sealed with (it is then sealed again with the current one), or set SECRET',
  );
}
