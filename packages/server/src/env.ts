import { isIP } from 'node:net';
import {
  databaseUrlProblem,
  defaultWebhookRetryDelaysMs,
  STREAM_LEASE_SECONDS,
  STREAM_NODE_LEASE_SECONDS,
  type WebhookUrlPolicy,
} from '@convene/core';
import { webDistDir } from '@convene/web';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { defaultVersionPolicy, type VersionPolicy } from './http/versioning';

/** A comma-separated list, trimmed, blanks dropped. */
const commaList = z
  .string()
  .default('')
  .transform((v) =>
    v
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );

/** A web origin as browsers send it: scheme, host and port only, in canonical form. */
const isOrigin = (value: string): boolean =>
  URL.canParse(value) && /^https?:$/.test(new URL(value).protocol) && new URL(value).origin === value;

const ZEnv = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('127.0.0.1'),
  PUBLIC_URL: z.string().url().optional(),
  DATABASE_URL: z
    .string()
    .optional()
    // Empty is unset: the embedded database.
    .transform((url) => url || undefined)
    .superRefine((url, ctx) => {
      const problem = databaseUrlProblem(url);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
  DATA_DIR: z.string().default('./.data'),
  RATE_LIMIT_MAX: z.coerce.number().int().positive().default(300),
  RATE_LIMIT_WINDOW_S: z.coerce.number().int().positive().default(60),
  LOCK_TTL_S: z.coerce.number().int().positive().default(600),
  LINK_TTL_S: z.coerce.number().int().positive().default(600),
  /** How long a closed or expired space is kept (dashboards show it) before it is deleted. */
  SPACE_RETENTION_S: z.coerce
    .number()
    .int()
    .nonnegative()
    .default(7 * 86_400),
  /** How long a `usr_` user token works after it is minted (default 90 days). */
  USER_TOKEN_TTL_S: z.coerce
    .number()
    .int()
    .positive()
    .default(90 * 86_400),
  SECRET: z.string().min(16).optional(),
  /** After a change of SECRET: the one it replaces (what it sealed is then sealed again). */
  PREVIOUS_SECRET: z.string().min(16).optional(),
  /** The database password a generated SECRET was sealed with, after that password changed. */
  PREVIOUS_DATABASE_PASSWORD: z.string().min(1).optional(),
  /** Read as postgres.js reads it, when DATABASE_URL names no password. */
  PGPASSWORD: z.string().min(1).optional(),
  /** Trust X-Forwarded-For for the client address (only behind a proxy you control). */
  TRUST_PROXY: z
    .enum(['true', 'false', '1', '0'])
    .default('false')
    .transform((v) => v === 'true' || v === '1'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** `json` (one JSON object per line) or `text` (for a person); unset: text on a terminal, else json. */
  LOG_FORMAT: z.enum(['json', 'text']).optional(),
  /** Lifetime of a dashboard JWT issued by the built-in accounts. */
  SESSION_TTL_S: z.coerce.number().int().positive().default(43_200),
  /** An external OpenID Connect issuer whose JWTs are also trusted as dashboard sessions. */
  OIDC_ISSUER: z.string().min(1).optional(),
  OIDC_JWKS_URL: z.string().url().optional(),
  OIDC_AUDIENCE: z.string().min(1).optional(),
  /** Let webhooks reach loopback, private and link-local addresses (only on a network you trust). */
  WEBHOOK_ALLOW_PRIVATE: z
    .enum(['true', 'false', '1', '0'])
    .default('false')
    .transform((v) => v === 'true' || v === '1'),
  /** Non-public addresses or CIDR ranges webhooks may reach nevertheless, comma-separated. */
  WEBHOOK_ALLOW_NETWORKS: commaList.refine(
    (list) => list.every((entry) => isIP(entry) !== 0 || ipaddr.isValidCIDR(entry)),
    {
      message: 'each entry must be an IP address or a CIDR range',
    },
  ),
  /** The waits between a webhook delivery's attempts, in seconds, comma-separated. */
  WEBHOOK_RETRY_DELAYS_S: z
    .string()
    .optional()
    .transform((v) => (v === undefined ? undefined : v.split(',').map((s) => Number(s.trim()))))
    .refine((list) => list === undefined || list.every((n) => Number.isFinite(n) && n >= 0), {
      message: 'a comma-separated list of seconds',
    }),
  /** How long a webhook receiver has to answer one delivery. */
  WEBHOOK_TIMEOUT_S: z.coerce.number().positive().max(60).default(10),
  /**
   * Origins whose pages may call the API from a browser (CORS), comma-separated, or `*` for any;
   * none by default (the server's own pages are same-origin).
   */
  CORS_ORIGINS: commaList.refine((list) => list.every((entry) => entry === '*' || isOrigin(entry)), {
    message: 'each entry must be an origin, such as https://app.example.com (no path), or *',
  }),
});

export interface ServerConfig {
  port: number;
  host: string;
  publicUrl: string;
  databaseUrl: string | undefined;
  dataDir: string;
  rateLimitMax: number;
  rateLimitWindowSeconds: number;
  lockTtlSeconds: number;
  linkTtlSeconds: number;
  userTokenTtlSeconds: number;
  /** Closed and expired spaces are deleted, with all they hold, this long after. */
  spaceRetentionSeconds: number;
  secret: string | undefined;
  previousSecret: string | undefined;
  /** The PostgreSQL password (DATABASE_URL's, else PGPASSWORD): what a generated SECRET is sealed with. */
  databasePassword: string | undefined;
  previousDatabasePassword: string | undefined;
  trustProxy: boolean;
  logLevel: z.infer<typeof ZEnv>['LOG_LEVEL'];
  /** How a server process prints its log (serve.ts); unset: text on a terminal, else json. */
  logFormat?: 'json' | 'text' | undefined;
  /** Interval of `: ping` comments on event streams. */
  streamPingMs: number;
  /** How often one key's lastSeenAt is written at most, per node (5 s; tests shorten it). */
  presenceIntervalMs: number;
  /**
   * How often a node renews the leases of the spaces it streams (a third of
   * STREAM_LEASE_SECONDS), and checks that it missed no event of them.
   */
  streamLeaseRenewMs: number;
  /** Open event streams per credential and per remote address across every node (429 beyond). */
  streamsPerCredential: number;
  streamsPerAddress: number;
  /**
   * How often a node renews its lease in `stream_nodes` (a third of STREAM_NODE_LEASE_SECONDS):
   * its streams count against the caps while it runs, and stop counting soon after a crash.
   */
  streamNodeRenewMs: number;
  /** A stream is closed once this much output is queued for a client that does not read. */
  streamMaxQueuedBytes: number;
  /** A request that has not been answered after this long answers 503 (streams and long waits excepted). */
  requestTimeoutMs: number;
  /** How often each node announces lapsed artifact locks (artifact-unlocked within 5 s). */
  lockSweepIntervalMs: number;
  /** How long an idempotent write's response is replayed (24 h). */
  idempotencyTtlSeconds: number;
  /** How long a duplicate waits for the first copy still running before answering 409 (10 s). */
  idempotencyWaitMs: number;
  /** How often each node deletes expired rate-limit counters and idempotency records. */
  policySweepIntervalMs: number;
  /** The API versions served, with their deprecation and sunset dates. */
  apiVersions: VersionPolicy;
  sessionTtlSeconds: number;
  /** Origins whose pages may call the API from a browser (CORS_ORIGINS; `*`: any). None: no CORS. */
  corsOrigins: string[];
  /** Where webhooks may point (WEBHOOK_ALLOW_PRIVATE, WEBHOOK_ALLOW_NETWORKS). */
  webhookUrls: WebhookUrlPolicy;
  /** The waits between a webhook delivery's attempts (about 24 h in all by default). */
  webhookRetryDelaysMs: readonly number[];
  /** How long a receiver has to answer. */
  webhookTimeoutMs: number;
  /** How often each node looks at the webhook queue without being told to. */
  webhookPollMs: number;
  /** Trusted external OpenID Connect issuer (OIDC_ISSUER + OIDC_JWKS_URL), if any. */
  oidc: { issuer: string; jwksUrl: string; audience: string } | undefined;
  /** The build of the browser pages (@convene/web) served at /, /space/…, /web/…: its dist/ by default. */
  webDir: string;
}

/** The one place that reads the environment; everything else receives a ServerConfig. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): ServerConfig {
  const parsed = ZEnv.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`invalid configuration: ${problems}`);
  }
  const e = parsed.data;
  const oidcSet = [e.OIDC_ISSUER, e.OIDC_JWKS_URL, e.OIDC_AUDIENCE].filter(Boolean).length;
  if (oidcSet !== 0 && oidcSet !== 3) {
    throw new Error(
      'invalid configuration: OIDC_ISSUER, OIDC_JWKS_URL and OIDC_AUDIENCE are set together or not at all',
    );
  }
  return {
    port: e.PORT,
    host: e.HOST,
    publicUrl: (e.PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ''),
    databaseUrl: e.DATABASE_URL,
    dataDir: e.DATA_DIR,
    rateLimitMax: e.RATE_LIMIT_MAX,
    rateLimitWindowSeconds: e.RATE_LIMIT_WINDOW_S,
    lockTtlSeconds: e.LOCK_TTL_S,
    linkTtlSeconds: e.LINK_TTL_S,
    userTokenTtlSeconds: e.USER_TOKEN_TTL_S,
    spaceRetentionSeconds: e.SPACE_RETENTION_S,
    secret: e.SECRET,
    previousSecret: e.PREVIOUS_SECRET,
    databasePassword: databasePassword(e.DATABASE_URL) ?? e.PGPASSWORD,
    previousDatabasePassword: e.PREVIOUS_DATABASE_PASSWORD,
    trustProxy: e.TRUST_PROXY,
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
    streamPingMs: 15_000,
    presenceIntervalMs: 5_000,
    streamLeaseRenewMs: (STREAM_LEASE_SECONDS * 1000) / 3,
    streamsPerCredential: 20,
    streamsPerAddress: 200,
    streamNodeRenewMs: (STREAM_NODE_LEASE_SECONDS * 1000) / 3,
    streamMaxQueuedBytes: 1024 * 1024,
    requestTimeoutMs: 30_000,
    lockSweepIntervalMs: 1000,
    idempotencyTtlSeconds: 86_400,
    idempotencyWaitMs: 10_000,
    policySweepIntervalMs: 60_000,
    apiVersions: defaultVersionPolicy,
    sessionTtlSeconds: e.SESSION_TTL_S,
    webhookUrls: { allowPrivate: e.WEBHOOK_ALLOW_PRIVATE, allowNetworks: e.WEBHOOK_ALLOW_NETWORKS },
    corsOrigins: e.CORS_ORIGINS,
    webhookRetryDelaysMs: e.WEBHOOK_RETRY_DELAYS_S?.map((s) => s * 1000) ?? defaultWebhookRetryDelaysMs,
    webhookTimeoutMs: e.WEBHOOK_TIMEOUT_S * 1000,
    webhookPollMs: 10_000,
    oidc:
      e.OIDC_ISSUER && e.OIDC_JWKS_URL && e.OIDC_AUDIENCE
        ? { issuer: e.OIDC_ISSUER, jwksUrl: e.OIDC_JWKS_URL, audience: e.OIDC_AUDIENCE }
        : undefined,
    webDir: webDistDir,
  };
}

function databasePassword(url: string | undefined): string | undefined {
  // In any case, as the database accepts the scheme (`POSTGRES://` too).
  if (!url || !/^postgres/i.test(url)) return undefined;
  try {
    const password = new URL(url).password;
    return password ? decodeURIComponent(password) : undefined;
  } catch {
    return undefined;
  }
}
