import { isIP } from 'node:net';
import {
  databaseUrlProblem,
  defaultWebhookRetryDelaysMs,
  postgresPassword,
  STALLED_SESSION_SWEEP_MS,
  STREAM_LEASE_SECONDS,
  STREAM_NODE_LEASE_SECONDS,
  type WebhookUrlPolicy,
} from '@convene/core';
import { webDistDir } from '@convene/web';
import { distance } from 'fastest-levenshtein';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { defaultVersionPolicy, type VersionPolicy } from './http/versioning';

const DAY_S = 86_400;
/** The longest any duration setting may be: far from where dates and timers overflow. */
const TEN_YEARS_S = 3650 * DAY_S;
/**
 * The longest one webhook retry delay may be: the worker waits for it with a timer, and a timer
 * of more than 2^31 - 1 ms (24.8 days) fires at once.
 */
export const MAX_WEBHOOK_RETRY_DELAY_S = 7 * DAY_S;
/** All the retries of one delivery together. */
export const MAX_WEBHOOK_RETRY_TOTAL_S = 30 * DAY_S;

/** A whole number as the environment must write it. */
const DECIMAL_DIGITS = /^[0-9]+$/;

/**
 * A whole number written in plain decimal digits, from `min` to `max`: `0x10`, `1e3`, ` 5`, `5.0`
 * and `-1` are refused (JavaScript's Number() took the first three, and an out-of-range number
 * became an invalid date or a timer that fires at once).
 */
const wholeNumber = (min: number, max: number) =>
  z
    .string()
    .regex(DECIMAL_DIGITS, 'must be a whole number written in decimal digits')
    .transform(Number)
    .refine((n) => n >= min && n <= max, {
      message: `must be from ${min.toLocaleString('en')} to ${max.toLocaleString('en')}`,
    });

/** The longest drain SHUTDOWN_DRAIN_S may ask for (a Kubernetes pod's grace period is 30 s by default). */
export const MAX_SHUTDOWN_DRAIN_S = 120;

/** The most proxies TRUST_PROXY may name. */
const MAX_PROXY_HOPS = 16;

/** A comma-separated list, each entry trimmed; an empty entry (`a,,b`, a trailing comma) is refused. */
const commaList = z
  .string()
  .optional()
  .transform((v) => (v === undefined ? [] : v.split(',').map((s) => s.trim())))
  .refine((list) => list.every(Boolean), {
    message: 'an entry of the comma-separated list is empty',
    // The entries' own checks would only repeat it.
    abort: true,
  });

/** A web origin as browsers send it: scheme, host and port only, in canonical form. */
const isOrigin = (value: string): boolean =>
  URL.canParse(value) && /^https?:$/.test(new URL(value).protocol) && new URL(value).origin === value;

/**
 * Why PUBLIC_URL cannot be the base of the links the service hands out, or undefined. Without a
 * scheme (`localhost:3000`) links read `localhost:3000/join/…`, and /mcp's Origin check had no
 * origin to compare with.
 */
function publicUrlProblem(value: string): string | undefined {
  const absolute = 'must be an absolute http:// or https:// URL, such as https://convene.example.com';
  if (!URL.canParse(value)) return absolute;
  const url = new URL(value);
  if (!/^https?:$/.test(url.protocol) || !/^https?:\/\//i.test(value)) return absolute;
  if (url.username || url.password) return 'must not hold a user name or password';
  if (value.includes('?') || value.includes('#')) return 'must not have a query (?) or a fragment (#)';
  return undefined;
}

/** SECRET's and PREVIOUS_SECRET's refusal: zod's own said "Too small: expected string to have >=16 characters". */
const SECRET_LENGTH =
  'must be 16 characters or more (e.g. `openssl rand -base64 32`), the same on every node';

/** One of `values`, in any case (`INFO` is `info`), said so when it is none of them. */
const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.preprocess(
    (value) => (typeof value === 'string' ? value.toLowerCase() : value),
    z.enum(values, { error: `must be one of ${values.join(', ')}` }),
  );

/**
 * An absolute http:// or https:// URL (an OpenID Connect issuer, its keys): `notaurl`, `ftp://` and
 * `file://` passed, to fail only at the first dashboard login.
 */
const httpUrl = (what: string) =>
  z
    .string()
    .optional()
    .refine((value) => value === undefined || (URL.canParse(value) && /^https?:\/\//i.test(value)), {
      message: `must be an absolute http:// or https:// URL: ${what}`,
    });

const ZEnv = z.object({
  PORT: wholeNumber(0, 65535).default(3000),
  HOST: z.string().default('127.0.0.1'),
  PUBLIC_URL: z
    .string()
    .optional()
    .superRefine((url, ctx) => {
      const problem = url === undefined ? undefined : publicUrlProblem(url);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
  DATABASE_URL: z
    .string()
    .optional()
    .superRefine((url, ctx) => {
      const problem = databaseUrlProblem(url);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
  DATA_DIR: z.string().default('./.data'),
  // A count kept in a PostgreSQL integer.
  RATE_LIMIT_MAX: wholeNumber(1, 1_000_000_000).default(300),
  RATE_LIMIT_WINDOW_S: wholeNumber(1, 30 * DAY_S).default(60),
  /**
   * Unset (the default), the human side's static routes (pages, /web/ assets, avatars) count in
   * the one window of RATE_LIMIT_MAX, as the specification's "300 per client, all endpoints"
   * says. Set, they count apart, this many per window per remote address: one first page view
   * costs a dozen or more of them, and a team behind one office address shares the count.
   */
  RATE_LIMIT_PAGES_MAX: wholeNumber(1, 1_000_000_000).optional(),
  LOCK_TTL_S: wholeNumber(1, 30 * DAY_S).default(600),
  LINK_TTL_S: wholeNumber(1, 30 * DAY_S).default(600),
  /** How long a closed or expired space is kept (dashboards show it) before it is deleted. */
  SPACE_RETENTION_S: wholeNumber(0, TEN_YEARS_S).default(7 * DAY_S),
  /** How long a `usr_` user token works after it is minted (default 90 days). */
  USER_TOKEN_TTL_S: wholeNumber(1, TEN_YEARS_S).default(90 * DAY_S),
  SECRET: z.string().min(16, SECRET_LENGTH).optional(),
  /** After a change of SECRET: the one it replaces (what it sealed is then sealed again). */
  PREVIOUS_SECRET: z.string().min(16, SECRET_LENGTH).optional(),
  /** The database password a generated SECRET was sealed with, after that password changed. */
  PREVIOUS_DATABASE_PASSWORD: z.string().min(1).optional(),
  /** Read as postgres.js reads it, when DATABASE_URL names no password. */
  PGPASSWORD: z.string().min(1).optional(),
  /**
   * How many proxies of yours stand before the node (`true` is one, `false` none): the client's
   * address is the X-Forwarded-For entry that many hops from the right, the one the farthest of
   * them saw. Entries left of it are what the client sent, which it could choose.
   */
  TRUST_PROXY: z
    .string()
    .default('false')
    .superRefine((v, ctx) => {
      if (v === 'true' || v === 'false' || (DECIMAL_DIGITS.test(v) && Number(v) <= MAX_PROXY_HOPS)) return;
      ctx.addIssue({
        code: 'custom',
        message: `must be true (one proxy), false (none) or how many proxies stand before the node, from 0 to ${MAX_PROXY_HOPS}`,
      });
    })
    .transform((v) => (v === 'true' ? 1 : v === 'false' ? 0 : Number(v))),
  LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** `json` (one JSON object per line) or `text` (for a person); unset: text on a terminal, else json. */
  LOG_FORMAT: oneOf(['json', 'text']).optional(),
  /**
   * On SIGTERM, how long the node keeps serving with `GET /api/health` answering 503 before it
   * closes, so that a load balancer stops sending it requests first (0: it closes at once).
   */
  SHUTDOWN_DRAIN_S: wholeNumber(0, MAX_SHUTDOWN_DRAIN_S).default(0),
  /** Lifetime of a dashboard JWT issued by the built-in accounts. */
  SESSION_TTL_S: wholeNumber(1, TEN_YEARS_S).default(43_200),
  /** An external OpenID Connect issuer whose JWTs are also trusted as dashboard sessions. */
  OIDC_ISSUER: httpUrl('the issuer identifier its tokens carry in `iss`, such as https://id.example.com'),
  OIDC_JWKS_URL: httpUrl(
    'where the issuer publishes its keys, such as https://id.example.com/.well-known/jwks.json',
  ),
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
  WEBHOOK_RETRY_DELAYS_S: commaList.transform((entries, ctx) => {
    if (entries.length === 0) return undefined;
    const max = MAX_WEBHOOK_RETRY_DELAY_S;
    const wrong = entries.find((entry) => !DECIMAL_DIGITS.test(entry) || Number(entry) > max);
    const total = entries.reduce((sum, entry) => sum + Number(entry), 0);
    const problem =
      wrong !== undefined
        ? `each delay must be a whole number of seconds from 0 to ${max.toLocaleString('en')} (7 days), not "${wrong}"`
        : entries.length > 100
          ? 'at most 100 delays'
          : total > MAX_WEBHOOK_RETRY_TOTAL_S
            ? `the delays must add up to at most ${MAX_WEBHOOK_RETRY_TOTAL_S.toLocaleString('en')} s (30 days)`
            : undefined;
    if (problem === undefined) return entries.map(Number);
    ctx.addIssue({ code: 'custom', message: problem });
    return z.NEVER;
  }),
  /** How long a webhook receiver has to answer one delivery. */
  WEBHOOK_TIMEOUT_S: wholeNumber(1, 60).default(10),
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
  /**
   * Requests per window per address to pages, their assets and avatars, apart from the API's;
   * undefined (the default): they count in the API's window.
   */
  pageRateLimitMax: number | undefined;
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
  /** Proxies trusted before the node, each adding an X-Forwarded-For entry (0: none). */
  trustProxy: number;
  logLevel: z.infer<typeof ZEnv>['LOG_LEVEL'];
  /** How a server process prints its log (serve.ts); unset: text on a terminal, else json. */
  logFormat?: 'json' | 'text' | undefined;
  /** On SIGTERM, how long `serve` keeps serving while `/api/health` answers 503 (0: none). */
  shutdownDrainMs: number;
  /** Interval of `: ping` comments on event streams. */
  streamPingMs: number;
  /** How often one key's lastSeenAt is written at most, per node (5 s; tests shorten it). */
  presenceIntervalMs: number;
  /**
   * How often the keys of the connections held open on this node (event streams, MCP session
   * streams, long polls) are written again: 14 s, under a stream's 15-s ping. Every 4 s cost a
   * space of 1,000 connected participants a quarter of its sends' speed (bench, session 43).
   */
  presenceHeldMs: number;
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
  /**
   * A connection whose request headers have not all arrived after this long is closed (408): a
   * client sending a header line now and then (slowloris) held its socket 95 s with Node's defaults.
   */
  headersTimeoutMs: number;
  /** How often each node announces lapsed artifact locks (artifact-unlocked within 5 s). */
  lockSweepIntervalMs: number;
  /** How long an idempotent write's response is replayed (24 h). */
  idempotencyTtlSeconds: number;
  /** How long a duplicate waits for the first copy still running before answering 409 (10 s). */
  idempotencyWaitMs: number;
  /** How often each node deletes expired rate-limit counters and idempotency records. */
  policySweepIntervalMs: number;
  /** On the embedded database, how often tables are vacuumed and analyzed where due (autovacuum's minute). */
  embeddedMaintenanceIntervalMs: number;
  /** On PostgreSQL, how often each node ends sessions stalled mid-statement (core's STALLED_SESSION_SWEEP_MS). */
  stalledSessionSweepIntervalMs: number;
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
  /** Variables set that are no setting but a slip of one, each with the one meant (settingSlips). */
  settingSlips?: readonly (readonly [given: string, meant: string])[];
}

/**
 * The environment's names that are no setting but a slip of one, each with the one meant: one
 * letter off or two swapped (`DATABSE_URL`, `SECERT`), its underscores left out (`PUBLICURL`), or its start (`SHUTDOWN_DRAIN`,
 * 8 characters or more). Ignored, as any variable is, a slip of DATABASE_URL ran a node of two on
 * an embedded database of its own, without a word. Other names (PATH, PGPORT) are no one's slip.
 */
function settingSlips(env: NodeJS.ProcessEnv): [string, string][] {
  /** Two neighbouring letters swapped (`SECERT`), which Levenshtein's distance counts twice. */
  const swapped = (a: string, b: string) => {
    if (a.length !== b.length) return false;
    const at = [...a].findIndex((letter, i) => letter !== b[i]);
    return at >= 0 && a[at] === b[at + 1] && a[at + 1] === b[at] && a.slice(at + 2) === b.slice(at + 2);
  };
  const known = Object.keys(ZEnv.shape);
  const squashed = (name: string) => name.replace(/_/g, '');
  const slips: [string, string][] = [];
  for (const name of Object.keys(env)) {
    if (known.includes(name) || !/^[A-Z][A-Z0-9_]{3,}$/.test(name)) continue;
    const meant =
      known.find((setting) => squashed(setting) === squashed(name)) ??
      known.find((setting) => distance(setting, name) === 1 || swapped(setting, name)) ??
      known.find((setting) => name.length >= 8 && setting.startsWith(name));
    if (meant) slips.push([name, meant]);
  }
  return slips;
}

/**
 * LOG_FORMAT alone, read where the whole configuration may have been refused: the format the line
 * saying so is written in. A value loadConfig would refuse counts as unset.
 */
export function logFormatOf(env: NodeJS.ProcessEnv = process.env): ServerConfig['logFormat'] {
  const parsed = ZEnv.shape.LOG_FORMAT.safeParse(withoutBlanks(env).LOG_FORMAT);
  return parsed.success ? parsed.data : undefined;
}

/**
 * A setting refused: by loadConfig, or at start where only trying it tells (a HOST that is no
 * address of this machine). The process says its message and exits 2, as for every refused
 * setting (README, Configuration); any other failure to start exits 1.
 */
export class ConfigurationError extends Error {
  override name = 'ConfigurationError';
}

/** The one place that reads the environment; everything else receives a ServerConfig. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): ServerConfig {
  const parsed = ZEnv.safeParse(withoutBlanks(env));
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigurationError(`invalid configuration: ${problems}`);
  }
  const e = parsed.data;
  const oidcSet = [e.OIDC_ISSUER, e.OIDC_JWKS_URL, e.OIDC_AUDIENCE].filter(Boolean).length;
  if (oidcSet !== 0 && oidcSet !== 3) {
    throw new ConfigurationError(
      'invalid configuration: OIDC_ISSUER, OIDC_JWKS_URL and OIDC_AUDIENCE are set together or not at all',
    );
  }
  return {
    settingSlips: settingSlips(env),
    port: e.PORT,
    host: e.HOST,
    publicUrl: e.PUBLIC_URL ? withoutTrailingSlash(new URL(e.PUBLIC_URL)) : `http://localhost:${e.PORT}`,
    databaseUrl: e.DATABASE_URL,
    dataDir: e.DATA_DIR,
    rateLimitMax: e.RATE_LIMIT_MAX,
    rateLimitWindowSeconds: e.RATE_LIMIT_WINDOW_S,
    pageRateLimitMax: e.RATE_LIMIT_PAGES_MAX,
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
    shutdownDrainMs: e.SHUTDOWN_DRAIN_S * 1000,
    streamPingMs: 15_000,
    presenceIntervalMs: 5_000,
    presenceHeldMs: 14_000,
    streamLeaseRenewMs: (STREAM_LEASE_SECONDS * 1000) / 3,
    streamsPerCredential: 20,
    streamsPerAddress: 200,
    streamNodeRenewMs: (STREAM_NODE_LEASE_SECONDS * 1000) / 3,
    streamMaxQueuedBytes: 1024 * 1024,
    requestTimeoutMs: 30_000,
    headersTimeoutMs: 10_000,
    lockSweepIntervalMs: 1000,
    idempotencyTtlSeconds: 86_400,
    idempotencyWaitMs: 10_000,
    policySweepIntervalMs: 60_000,
    embeddedMaintenanceIntervalMs: 60_000,
    stalledSessionSweepIntervalMs: STALLED_SESSION_SWEEP_MS,
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

/**
 * The environment with its empty and all-whitespace values left out: every variable set to
 * nothing is unset, and its default applies. Each variable used to read emptiness its own way
 * (`HOST=` every interface, `PORT=` a random port, `SPACE_RETENTION_S=` 0, `DATA_DIR=` a failed
 * mkdir, `WEBHOOK_RETRY_DELAYS_S=` one immediate retry, others refused).
 */
function withoutBlanks(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => (entry[1] ?? '').trim() !== ''),
  );
}

/** An http(s) URL as links are built on it: its origin and path, no trailing slash. */
const withoutTrailingSlash = (url: URL): string => `${url.origin}${url.pathname}`.replace(/\/+$/, '');

function databasePassword(url: string | undefined): string | undefined {
  // In any case, as the database accepts the scheme (`POSTGRES://` too).
  if (!url || !/^postgres/i.test(url)) return undefined;
  return postgresPassword(url)?.decoded;
}
