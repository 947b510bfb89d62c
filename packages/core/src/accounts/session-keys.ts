import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
} from 'node:crypto';
import { eq } from 'drizzle-orm';
import { settings } from '../db/schema/infra';
import type { Db } from '../db/types';
import { newId } from '../ids';
import type { SecretBox } from '../secrets';

/**
 * The deployment's dashboard-JWT identity: one issuer and one Ed25519 key pair for every node
 * sharing the database, whatever each node's PUBLIC_URL, kept across restarts.
 */
export interface SessionKeys {
  /** `iss` and `aud` of issued JWTs: `urn:convene:deployment:<uuid>`, not a node's URL. */
  issuer: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** RFC 7638 thumbprint of the public key. */
  kid: string;
}

/** The settings row holding the issuer and the private key, sealed under SECRET. */
export const SESSION_KEYS_SETTING = 'dashboard-jwt';

interface Stored {
  issuer: string;
  /** PKCS#8 DER, base64. */
  privateKey: string;
}

/**
 * Loads the deployment's session keys, generating them on the first start of the first node.
 * Concurrent first starts race on one INSERT … ON CONFLICT DO NOTHING and all read the winner's.
 * The private key is sealed with the SecretBox, so nodes must share SECRET (as they must to read
 * any sealed key).
 */
export async function loadSessionKeys(db: Db, box: SecretBox): Promise<SessionKeys> {
  await db
    .insert(settings)
    .values({ key: SESSION_KEYS_SETTING, value: box.encrypt(mintSessionKeys()) })
    .onConflictDoNothing();
  const [row] = await db
    .select({ value: settings.value })
    .from(settings)
    .where(eq(settings.key, SESSION_KEYS_SETTING));
  if (!row) throw new Error('could not load the dashboard session keys');
  let stored: Stored;
  try {
    stored = JSON.parse(box.decrypt(row.value)) as Stored;
  } catch {
    throw new Error(SESSION_KEYS_UNREADABLE);
  }
  return sessionKeysOf(stored);
}

/** A node whose SECRET does not open the deployment's session keys, and no PREVIOUS_SECRET that does. */
export const SESSION_KEYS_UNREADABLE =
  'the dashboard session keys in the database cannot be read with this SECRET: every node of a deployment needs the same SECRET; to change it, start with PREVIOUS_SECRET set to the one it replaces';

/** A new deployment's issuer and Ed25519 private key, as the settings row keeps them (before sealing). */
export function mintSessionKeys(): string {
  const { privateKey } = generateKeyPairSync('ed25519');
  const stored: Stored = {
    issuer: `urn:convene:deployment:${newId()}`,
    privateKey: privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
  };
  return JSON.stringify(stored);
}

function sessionKeysOf(stored: Stored): SessionKeys {
  const privateKey = createPrivateKey({
    key: Buffer.from(stored.privateKey, 'base64'),
    format: 'der',
    type: 'pkcs8',
  });
  const publicKey = createPublicKey(privateKey);
  const jwk = publicKey.export({ format: 'jwk' });
  // RFC 7638 thumbprint: SHA-256 of the required members in lexicographic order.
  const kid = createHash('sha256')
    .update(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x }))
    .digest('base64url');
  return { issuer: stored.issuer, privateKey, publicKey, kid };
}
