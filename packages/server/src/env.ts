import { z } from 'zod';

const ZEnv = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('127.0.0.1'),
  PUBLIC_URL: z.string().url().optional(),
  DATABASE_URL: z.string().optional(),
  DATA_DIR: z.string().default('./.data'),
  RATE_LIMIT_MAX: z.coerce.number().int().positive().default(300),
  RATE_LIMIT_WINDOW_S: z.coerce.number().int().positive().default(60),
  LOCK_TTL_S: z.coerce.number().int().positive().default(600),
  LINK_TTL_S: z.coerce.number().int().positive().default(600),
  SECRET: z.string().min(16).optional(),
  /** Trust X-Forwarded-For for the client address (only behind a proxy you control). */
  TRUST_PROXY: z
    .enum(['true', 'false', '1', '0'])
    .default('false')
    .transform((v) => v === 'true' || v === '1'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
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
  secret: string | undefined;
  trustProxy: boolean;
  logLevel: z.infer<typeof ZEnv>['LOG_LEVEL'];
  /** Interval of `: ping` comments on event streams. */
  streamPingMs: number;
}

/** The one place that reads the environment; everything else receives a ServerConfig. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): ServerConfig {
  const parsed = ZEnv.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`invalid configuration: ${problems}`);
  }
  const e = parsed.data;
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
    secret: e.SECRET,
    trustProxy: e.TRUST_PROXY,
    logLevel: e.LOG_LEVEL,
    streamPingMs: 15_000,
  };
}
