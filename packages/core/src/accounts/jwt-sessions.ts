import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';
import type { SessionKeys } from './session-keys';
import type { DashboardSessions, SessionIdentity } from './sessions';

export interface ExternalIssuerOptions {
  /** `iss` of the trusted OpenID Connect provider, exactly as it appears in its tokens. */
  issuer: string;
  /** Where its public keys are published (its `jwks_uri`). */
  jwksUrl: string;
  /**
   * The `aud` its tokens must carry (this deployment's client id there). Required: without it, a
   * token the issuer minted for any other application would open a dashboard here.
   */
  audience: string;
}

export interface JwtSessionsOptions {
  /** The deployment's issuer and signing key (loadSessionKeys), the same on every node. */
  keys: SessionKeys;
  /** Lifetime of an issued JWT; default 12 hours. */
  ttlSeconds?: number | undefined;
  /** An external OpenID Connect issuer whose JWTs are trusted beside the built-in ones. */
  external?: ExternalIssuerOptions | undefined;
}

export const DEFAULT_SESSION_TTL_SECONDS = 12 * 60 * 60;

/** ID-JAG assertions (rule 10) are never accepted as a session, whoever signed them. */
const REFUSED_TYPES = new Set(['oauth-id-jag+jwt']);

/** Dashboard sessions as EdDSA JWTs (jose), optionally also trusting an external OIDC issuer. */
export function createJwtSessions(options: JwtSessionsOptions): DashboardSessions {
  const { issuer, privateKey, publicKey, kid } = options.keys;
  const ttlSeconds = options.ttlSeconds ?? DEFAULT_SESSION_TTL_SECONDS;
  const external = options.external;
  const remoteKeys = external ? createRemoteJWKSet(new URL(external.jwksUrl)) : undefined;
  const publicJwk = { ...publicKey.export({ format: 'jwk' }), kid, alg: 'EdDSA', use: 'sig' };

  async function verifyLocal(token: string, now: Date): Promise<SessionIdentity | null> {
    const { payload } = await jwtVerify(token, publicKey, {
      issuer,
      audience: issuer,
      algorithms: ['EdDSA'],
      typ: 'JWT',
      currentDate: now,
      requiredClaims: ['sub', 'exp'],
    });
    return payload.sub ? { kind: 'local', userId: payload.sub } : null;
  }

  async function verifyExternal(token: string, now: Date): Promise<SessionIdentity | null> {
    if (!external || !remoteKeys) return null;
    const { payload } = await jwtVerify(token, remoteKeys, {
      issuer: external.issuer,
      audience: external.audience,
      currentDate: now,
      requiredClaims: ['sub', 'exp'],
    });
    if (!payload.sub) return null;
    const email =
      // Only an email the issuer says it verified: a missing claim proves nothing.
      typeof payload.email === 'string' && payload.email_verified === true ? payload.email : undefined;
    return {
      kind: 'external',
      issuer: external.issuer,
      subject: payload.sub,
      email,
      name: typeof payload.name === 'string' ? payload.name : undefined,
    };
  }

  return {
    async issue(user, now) {
      const issuedAt = Math.floor(now.getTime() / 1000);
      const expiresAt = new Date((issuedAt + ttlSeconds) * 1000);
      const token = await new SignJWT({ email: user.email, name: user.name })
        .setProtectedHeader({ alg: 'EdDSA', kid, typ: 'JWT' })
        .setIssuer(issuer)
        .setAudience(issuer)
        .setSubject(user.id)
        .setIssuedAt(issuedAt)
        .setExpirationTime(issuedAt + ttlSeconds)
        .sign(privateKey);
      return { token, expiresAt };
    },

    async verify(token, now) {
      try {
        const header = decodeProtectedHeader(token);
        if (typeof header.typ === 'string' && REFUSED_TYPES.has(header.typ.toLowerCase())) return null;
        const { iss } = decodeJwt(token);
        if (iss === issuer) return await verifyLocal(token, now);
        if (external && iss === external.issuer) return await verifyExternal(token, now);
        return null;
      } catch {
        // Malformed, expired, badly signed, or the issuer's keys unreachable: not a session.
        return null;
      }
    },

    jwks: () => ({ keys: [publicJwk] }),
  };
}
