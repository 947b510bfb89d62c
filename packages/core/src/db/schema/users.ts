import { index, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

/** Human accounts of the built-in identity provider. */
export const users = pgTable(
  'users',
  {
    id: uuid('id').primaryKey(),
    /** Lower-cased. */
    email: text('email').notNull(),
    name: text('name').notNull().default(''),
    /** scrypt hash with its parameters and salt; null for users known only through external OIDC. */
    passwordHash: text('password_hash'),
    /** `sub` of an external OpenID Connect issuer, when the human comes from one. */
    externalSubject: text('external_subject'),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [
    uniqueIndex('users_email_idx').on(t.email),
    index('users_external_subject_idx').on(t.externalSubject),
  ],
);

export const apiTokens = pgTable(
  'api_tokens',
  {
    id: uuid('id').primaryKey(),
    userId: uuid('user_id').notNull(),
    name: text('name').notNull(),
    /** First characters of the token, shown in lists so a human can tell tokens apart. */
    prefix: text('prefix').notNull(),
    tokenHash: text('token_hash').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true, precision: 3 }),
    revokedAt: timestamp('revoked_at', { withTimezone: true, precision: 3 }),
    /** After this the token no longer works (USER_TOKEN_TTL_S after it was minted). */
    expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [uniqueIndex('api_tokens_hash_idx').on(t.tokenHash), index('api_tokens_user_idx').on(t.userId)],
);

/** Browser-link (device-flow) requests. */
export const linkRequests = pgTable(
  'link_requests',
  {
    id: uuid('id').primaryKey(),
    /** SHA-256 of the device code; the code itself is never stored. */
    deviceCodeHash: text('device_code_hash').notNull(),
    /** XXXXXXXX without the dash, upper case. */
    userCode: text('user_code').notNull(),
    agentName: text('agent_name'),
    status: text('status', { enum: ['pending', 'approved', 'denied', 'consumed'] }).notNull(),
    userId: uuid('user_id'),
    /** The token minted on approval, encrypted until the agent's poll collects it once. */
    tokenEnc: text('token_enc'),
    tokenId: uuid('token_id'),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [
    uniqueIndex('link_requests_device_code_idx').on(t.deviceCodeHash),
    uniqueIndex('link_requests_user_code_idx').on(t.userCode),
  ],
);
