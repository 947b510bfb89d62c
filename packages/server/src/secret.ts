import { randomBytes, scryptSync } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  adoptSecret,
  type Database,
  isMemoryUrl,
  makeDirectories,
  makeFilePrivate,
  resealSecrets,
  SESSION_KEYS_SETTING,
  SecretBox,
  schema,
} from '@convene/core';
import { eq, inArray } from 'drizzle-orm';
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

const readSetting = async (database: Database, key: string): Promise<string | undefined> =>
  (
    await database.db
      .select({ value: schema.settings.value })
      .from(schema.settings)
      .where(eq(schema.settings.key, key))
  )[0]?.value;

const mint = (): string => randomBytes(32).toString('hex');

/** Where embedded PGlite keeps a generated SECRET. */
const secretFile = (config: ServerConfig): string => join(config.dataDir, 'secret');

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
  onTightened?: (message: string) => void,
): Promise<string> {
  if (isMemoryUrl(config.databaseUrl)) return mint();
  if (database.engine === 'pglite') {
    const file = secretFile(config);
    let secret: string;
    try {
      secret = readFileSync(file, 'utf8').trim();
    } catch {
      // A data directory copied without its secret: a new one would open nothing it holds.
      if (await readSetting(database, SESSION_KEYS_SETTING))
        throw new Error(
          `${file} is missing, and the database under DATA_DIR was sealed with the SECRET it held: restore that file with the data, or set SECRET to its value`,
        );
      makeDirectories(config.dataDir, 0o700);
      const minted = mint();
      writeFileSync(file, minted, { mode: 0o600 });
      return minted;
    }
    // One others may read (made by hand, or copied) is closed to 0600, as the directory is to 0700.
    makeFilePrivate(file, onTightened);
    return secret;
  }
  const db = database.db;
  const read = (key: string) => readSetting(database, key);
  // What a generated SECRET left, read once: sealed, or in clear (an earlier version's).
  const sealedBefore = await read(SEALED);
  const clear = await read(CLEAR);
  // Set up with a SECRET of the operator's (no generated one, and keys sealed): one generated now
  // would open nothing, and, written before the start was refused, it made the next start with
  // the right SECRET say it replaced a generated one, and a wrong one ask for PREVIOUS_SECRET.
  if (sealedBefore === undefined && clear === undefined && (await read(SESSION_KEYS_SETTING)) !== undefined)
    throw new Error(
      'SECRET is not set, but this database was set up with one (what it seals opens with no other): set SECRET to the value every node of this deployment runs with',
    );
  const password = config.databasePassword;
  if (!password) {
    warn(
      'SECRET is unset and DATABASE_URL names no password to seal the generated one with: it is kept unsealed in the database, so a copy of the database opens the keys it protects. Set SECRET (16 characters or more, e.g. `openssl rand -base64 32`, the same on every node) or connect with a password.',
    );
    if (sealedBefore)
      throw new Error(
        'the generated SECRET in the database is sealed with a database password, and DATABASE_URL names none: connect with that password (a SECRET set instead would open nothing sealed under the generated one)',
      );
    await db.insert(schema.settings).values({ key: CLEAR, value: mint() }).onConflictDoNothing();
    // Read again: another node starting at once may have written its own first.
    const kept = await read(CLEAR);
    if (!kept) throw new Error('could not load the server secret');
    return kept;
  }
  const box = sealWith(password);

  // A secret an earlier version kept in clear is sealed now, and its clear copy removed.
  const candidate = clear ?? mint();
  await db
    .insert(schema.settings)
    .values({ key: SEALED, value: box.encrypt(candidate) })
    .onConflictDoNothing();
  const sealed = await read(SEALED);
  if (!sealed) throw new Error('could not load the server secret');
  const { secret, stale } = unseal(sealed, box, config);
  if (stale) {
    await db
      .update(schema.settings)
      .set({ value: box.encrypt(secret) })
      .where(eq(schema.settings.key, SEALED));
    // Said, as PREVIOUS_SECRET's own reseal is: how the operator knows the variable may go.
    warn(
      'the generated SECRET was sealed again with the current database password: remove PREVIOUS_DATABASE_PASSWORD from every node',
    );
  } else if (config.previousDatabasePassword)
    warn(
      'PREVIOUS_DATABASE_PASSWORD is set, but the generated SECRET opens with the current database password (another node sealed it again, or it never changed): remove it',
    );
  if (clear !== undefined) await db.delete(schema.settings).where(eq(schema.settings.key, CLEAR));
  return secret;
}

/**
 * The generated SECRET sealed in the database, opened with `box` (sealed with the database
 * password) or, after a change of that password, with PREVIOUS_DATABASE_PASSWORD: then `stale`, to
 * be sealed again with the current one. Throws when neither opens it.
 */
function unseal(sealed: string, box: SecretBox, config: ServerConfig): { secret: string; stale: boolean } {
  try {
    return { secret: box.decrypt(sealed), stale: false };
  } catch {
    // Not the current password: the previous one, else answered below.
  }
  if (config.previousDatabasePassword) {
    try {
      return { secret: sealWith(config.previousDatabasePassword).decrypt(sealed), stale: true };
    } catch {
      // Neither password opens it.
    }
  }
  throw new Error(
    'the generated SECRET in the database is sealed with another database password: start once with PREVIOUS_DATABASE_PASSWORD set to the password it was sealed with (it is then sealed again with the current one)',
  );
}

/**
 * The SECRET generated for this deployment, if one was and it can be opened (see
 * loadOrCreateSecret), without generating one.
 */
async function generatedSecret(database: Database, config: ServerConfig): Promise<string | undefined> {
  if (isMemoryUrl(config.databaseUrl)) return undefined;
  if (database.engine === 'pglite') {
    try {
      return readFileSync(secretFile(config), 'utf8').trim();
    } catch {
      return undefined;
    }
  }
  const clear = await readSetting(database, CLEAR);
  if (clear !== undefined) return clear;
  const sealed = await readSetting(database, SEALED);
  if (sealed === undefined || !config.databasePassword) return undefined;
  try {
    return unseal(sealed, sealWith(config.databasePassword), config).secret;
  } catch {
    return undefined;
  }
}

async function forgetGeneratedSecret(database: Database, config: ServerConfig): Promise<void> {
  if (database.engine === 'pglite') rmSync(secretFile(config), { force: true });
  else await database.db.delete(schema.settings).where(inArray(schema.settings.key, [SEALED, CLEAR]));
}

/**
 * At start, before anything is sealed or opened: the deployment's SECRET becomes this node's
 * (adoptSecret), and, after a change, what was sealed under the SECRET before it (PREVIOUS_SECRET,
 * or else the generated one that a SECRET of the operator's own now replaces) is sealed again
 * under the current one (resealSecrets): at every start with PREVIOUS_SECRET, so that what a node
 * left on the old SECRET sealed during a rolling change is found too. A generated SECRET so
 * replaced is then forgotten: nothing it sealed is left. Gives the previous SECRET's box, which
 * still opens (and reseals) a value it sealed while this node runs.
 */
export async function settleSecret(
  database: Database,
  config: ServerConfig,
  box: SecretBox,
  info: (message: string) => void,
): Promise<SecretBox | undefined> {
  const generated = config.secret === undefined ? undefined : await generatedSecret(database, config);
  const replaced = generated !== undefined && generated !== config.secret;
  const previousSecret = config.previousSecret ?? (replaced ? generated : undefined);
  const previous = previousSecret === undefined ? undefined : new SecretBox(previousSecret);
  const adoption = await adoptSecret(database.db, box, previous);
  if (!previous) return undefined;
  const done = await resealSecrets(database.db, previous, box);
  // The session keys count among the values sealed again, when this start moved them.
  const resealed = done.resealed + (adoption === 'changed' ? 1 : 0);
  const unreadable = done.unreadable
    ? ` (${done.unreadable} opened with neither and were left as they were)`
    : '';
  if (resealed > 0 || unreadable)
    info(`SECRET changed: ${resealed} sealed values were sealed again under the new one${unreadable}`);
  else if (!replaced)
    info(
      'PREVIOUS_SECRET is set and nothing is sealed under it any more: remove it once every node runs with the new SECRET',
    );
  if (replaced) {
    await forgetGeneratedSecret(database, config);
    info('the generated SECRET was replaced by the SECRET set and is forgotten: keep setting SECRET');
  }
  return previous;
}
