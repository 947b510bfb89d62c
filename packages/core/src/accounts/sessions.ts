/**
 * The dashboard-session port: issues and verifies the JWTs that stand for a logged-in human on
 * `/hub/me/*` and key recovery. Its real implementation is `createJwtSessions` (jose, EdDSA);
 * core's use cases see only this face.
 */

export interface SessionSubject {
  id: string;
  email: string;
  name: string;
}

/** Who a verified JWT names: a human of the built-in accounts, or one of a trusted external issuer. */
export type SessionIdentity =
  | { kind: 'local'; userId: string }
  | {
      kind: 'external';
      issuer: string;
      subject: string;
      /** Present only when the issuer says it verified it (`email_verified: true`). */
      email: string | undefined;
      name: string | undefined;
    };

export interface IssuedSession {
  token: string;
  expiresAt: Date;
}

export interface DashboardSessions {
  /** A signed dashboard JWT for a built-in account, valid from `now`. */
  issue(user: SessionSubject, now: Date): Promise<IssuedSession>;
  /** The identity a JWT proves at `now`, or null for anything else (malformed, expired, foreign, forged). */
  verify(token: string, now: Date): Promise<SessionIdentity | null>;
  /** The public keys that verify issued JWTs (`/.well-known/jwks.json`). */
  jwks(): { keys: Record<string, unknown>[] };
}
