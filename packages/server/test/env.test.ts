// The environment as `serve` reads it: what each variable accepts, and what it refuses at start.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/env';

const VARIABLES = [
  'PORT',
  'HOST',
  'PUBLIC_URL',
  'DATABASE_URL',
  'PGPASSWORD',
  'DATA_DIR',
  'RATE_LIMIT_MAX',
  'RATE_LIMIT_WINDOW_S',
  'RATE_LIMIT_PAGES_MAX',
  'LOCK_TTL_S',
  'LINK_TTL_S',
  'SPACE_RETENTION_S',
  'SECRET',
  'PREVIOUS_SECRET',
  'PREVIOUS_DATABASE_PASSWORD',
  'TRUST_PROXY',
  'CORS_ORIGINS',
  'LOG_LEVEL',
  'LOG_FORMAT',
  'SHUTDOWN_DRAIN_S',
  'SESSION_TTL_S',
  'USER_TOKEN_TTL_S',
  'OIDC_ISSUER',
  'OIDC_JWKS_URL',
  'OIDC_AUDIENCE',
  'WEBHOOK_ALLOW_PRIVATE',
  'WEBHOOK_ALLOW_NETWORKS',
  'WEBHOOK_RETRY_DELAYS_S',
  'WEBHOOK_TIMEOUT_S',
];
const NUMBERS = [
  'PORT',
  'RATE_LIMIT_MAX',
  'RATE_LIMIT_WINDOW_S',
  'RATE_LIMIT_PAGES_MAX',
  'LOCK_TTL_S',
  'LINK_TTL_S',
  'SPACE_RETENTION_S',
  'SESSION_TTL_S',
  'USER_TOKEN_TTL_S',
  'WEBHOOK_TIMEOUT_S',
  'SHUTDOWN_DRAIN_S',
];

/** What loadConfig refuses `env` with. */
const refusal = (env: Record<string, string>): string => {
  try {
    loadConfig(env);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(env)}`);
};

describe('configuration', () => {
  it('takes an empty or all-whitespace value of any variable as unset: its default applies', () => {
    const defaults = loadConfig({});
    for (const name of VARIABLES)
      for (const value of ['', '  ', '\t'])
        expect({ name, config: loadConfig({ [name]: value }) }).toEqual({ name, config: defaults });
    // What they used to mean instead.
    expect(defaults).toMatchObject({
      host: '127.0.0.1',
      port: 3000,
      publicUrl: 'http://localhost:3000',
      dataDir: './.data',
      spaceRetentionSeconds: 604_800,
    });
    expect(defaults.webhookRetryDelaysMs).toHaveLength(10);
  });

  it('refuses a list with an empty entry, naming the variable', () => {
    for (const [name, value] of [
      ['WEBHOOK_RETRY_DELAYS_S', '5,,30'],
      ['WEBHOOK_RETRY_DELAYS_S', '5,30,'],
      ['CORS_ORIGINS', 'https://a.example,,https://b.example'],
      ['WEBHOOK_ALLOW_NETWORKS', '10.0.0.0/8,'],
    ] as const)
      expect(refusal({ [name]: value })).toBe(
        `invalid configuration: ${name}: an entry of the comma-separated list is empty`,
      );
    expect(loadConfig({ WEBHOOK_RETRY_DELAYS_S: '5, 30' }).webhookRetryDelaysMs).toEqual([5000, 30_000]);
  });

  it('takes numbers only as plain decimal digits, naming the variable that holds anything else', () => {
    for (const name of NUMBERS) {
      for (const value of ['0x10', '1e3', ' 5', '5 ', '5.0', '-1', '+5', 'ten'])
        expect(refusal({ [name]: value })).toBe(
          `invalid configuration: ${name}: must be a whole number written in decimal digits`,
        );
      expect(loadConfig({ [name]: '10' })).toBeDefined();
    }
    expect(loadConfig({ PORT: '8080', SPACE_RETENTION_S: '0' })).toMatchObject({
      port: 8080,
      spaceRetentionSeconds: 0,
    });
  });

  it('refuses numbers beyond what dates and timers hold, naming the variable', () => {
    for (const name of NUMBERS)
      expect(refusal({ [name]: '99999999999999999999' })).toMatch(
        new RegExp(`^invalid configuration: ${name}: must be from \\d+ to [\\d,]+$`),
      );
    expect(refusal({ PORT: '65536' })).toBe('invalid configuration: PORT: must be from 0 to 65,535');
    expect(refusal({ LOCK_TTL_S: '0' })).toBe(
      'invalid configuration: LOCK_TTL_S: must be from 1 to 2,592,000',
    );
    // A timer of more than 2^31 - 1 ms fires at once: one delay is at most 7 days, all of them 30.
    expect(refusal({ WEBHOOK_RETRY_DELAYS_S: '99999999999999999999' })).toBe(
      'invalid configuration: WEBHOOK_RETRY_DELAYS_S: each delay must be a whole number of seconds from 0 to 604,800 (7 days), not "99999999999999999999"',
    );
    for (const delays of ['604801', '5,1e3', '5,0x10', '5,-1'])
      expect(refusal({ WEBHOOK_RETRY_DELAYS_S: delays })).toMatch(
        /^invalid configuration: WEBHOOK_RETRY_DELAYS_S: each delay must be a whole number of seconds/,
      );
    expect(refusal({ WEBHOOK_RETRY_DELAYS_S: Array(5).fill('604800').join(',') })).toBe(
      'invalid configuration: WEBHOOK_RETRY_DELAYS_S: the delays must add up to at most 2,592,000 s (30 days)',
    );
    expect(loadConfig({ WEBHOOK_RETRY_DELAYS_S: '0,604800' }).webhookRetryDelaysMs).toEqual([0, 604_800_000]);
  });

  it('takes PUBLIC_URL only as an absolute http(s) URL without query, fragment or credentials', () => {
    const absolute = 'must be an absolute http:// or https:// URL, such as https://convene.example.com';
    for (const [url, problem] of [
      ['localhost:56128', absolute],
      ['ftp://x.example', absolute],
      ['http:/x.example', absolute],
      ['/relative', absolute],
      ['https://user:pw@x.example', 'must not hold a user name or password'],
      ['https://x.example/?a=1', 'must not have a query (?) or a fragment (#)'],
      ['https://x.example/#top', 'must not have a query (?) or a fragment (#)'],
    ])
      expect(refusal({ PUBLIC_URL: url! })).toBe(`invalid configuration: PUBLIC_URL: ${problem}`);
    expect(refusal({ PUBLIC_URL: 'https://user:pw@x.example' })).not.toContain('pw');
    for (const [url, publicUrl] of [
      ['https://convene.example.com/', 'https://convene.example.com'],
      ['http://localhost:56128', 'http://localhost:56128'],
      ['HTTPS://Convene.Example.com/base//', 'https://convene.example.com/base'],
    ])
      expect(loadConfig({ PUBLIC_URL: url! }).publicUrl).toBe(publicUrl);
  });

  it('takes OIDC_ISSUER and OIDC_JWKS_URL only as absolute http(s) URLs, naming the variable', () => {
    const oidc = {
      OIDC_ISSUER: 'https://id.example.com',
      OIDC_JWKS_URL: 'https://id.example.com/jwks',
      OIDC_AUDIENCE: 'convene',
    };
    for (const [name, value] of [
      ['OIDC_ISSUER', 'notaurl'],
      ['OIDC_ISSUER', 'id.example.com'],
      ['OIDC_JWKS_URL', 'ftp://x.example/jwks'],
      ['OIDC_JWKS_URL', 'file:///etc/passwd'],
      ['OIDC_JWKS_URL', 'alsonot'],
    ] as const)
      expect(refusal({ ...oidc, [name]: value }), value).toMatch(
        new RegExp(`^invalid configuration: ${name}: must be an absolute http:// or https:// URL: `),
      );
    expect(loadConfig(oidc).oidc).toEqual({
      issuer: 'https://id.example.com',
      jwksUrl: 'https://id.example.com/jwks',
      audience: 'convene',
    });
    expect(loadConfig({ ...oidc, OIDC_ISSUER: 'http://localhost:8080/realms/dev' }).oidc?.issuer).toBe(
      'http://localhost:8080/realms/dev',
    );
  });

  it('says what SECRET, LOG_LEVEL and LOG_FORMAT take when it refuses them, and takes a level or format in any case', () => {
    for (const name of ['SECRET', 'PREVIOUS_SECRET'])
      expect(refusal({ [name]: 'too short' })).toBe(
        `invalid configuration: ${name}: must be 16 characters or more (e.g. \`openssl rand -base64 32\`), the same on every node`,
      );
    expect(refusal({ LOG_LEVEL: 'loud' })).toBe(
      'invalid configuration: LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent',
    );
    expect(refusal({ LOG_FORMAT: 'xml' })).toBe(
      'invalid configuration: LOG_FORMAT: must be one of json, text',
    );
    expect(loadConfig({ LOG_LEVEL: 'INFO', LOG_FORMAT: 'Text' })).toMatchObject({
      logLevel: 'info',
      logFormat: 'text',
    });
  });

  it('says what TRUST_PROXY accepts when it refuses it', () => {
    for (const value of ['yes', '-1', '17', '10.0.0.1', '1.5', 'TRUE'])
      expect(refusal({ TRUST_PROXY: value })).toBe(
        'invalid configuration: TRUST_PROXY: must be true (one proxy), false (none) or how many proxies stand before the node, from 0 to 16',
      );
    for (const [value, hops] of [
      ['true', 1],
      ['false', 0],
      ['0', 0],
      ['16', 16],
    ] as const)
      expect(loadConfig({ TRUST_PROXY: value }).trustProxy).toBe(hops);
  });

  it('names DATABASE_URL when it cannot be read as a URL, and never repeats its password', () => {
    for (const url of [
      'postgres://convene:hunter%zz2@db/convene',
      'postgres://convene:hunter#2@db/convene',
      'postgres://convene:hunter2@db:99999/convene',
      'postgresql://convene:hunter2@[db/convene',
    ]) {
      const message = refusal({ DATABASE_URL: url });
      expect(message).toMatch(/^invalid configuration: DATABASE_URL: is not a URL that can be read/);
      expect(message).not.toMatch(/hunter/);
    }
    // Several hosts, as postgres.js takes them.
    expect(loadConfig({ DATABASE_URL: 'postgres://a:5432,b:5433/convene' }).databaseUrl).toBe(
      'postgres://a:5432,b:5433/convene',
    );
  });
});
