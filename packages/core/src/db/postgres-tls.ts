import { connect } from 'node:net';
import postgres from 'postgres';
import { type PostgresTarget, readablePostgresUrl } from './postgres-target';

/**
 * The values of `sslmode` libpq knows, all of which postgres.js reads: `disable` (no TLS),
 * `prefer` (TLS when the server offers it), and the others, which require TLS. postgres.js checks
 * the certificate for `verify-ca` as for `verify-full` (its host name too), and takes `allow` as
 * `require`: it never falls back to a connection without TLS, as libpq's `allow` does.
 */
const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const;

/**
 * Why a PostgreSQL URL's `sslmode` cannot be used, or undefined. postgres.js takes any value but
 * `disable` (and `false`) for TLS with the certificate checked: `sslmode=requir` or `Disable`
 * meant verify-full, without a word.
 */
export function sslModeProblem(target: PostgresTarget): string | undefined {
  const unknown = readablePostgresUrl(target.url)
    .searchParams.getAll('sslmode')
    .find((mode) => !(SSL_MODES as readonly string[]).includes(mode));
  if (unknown === undefined) return undefined;
  return `has sslmode=${unknown}, which is none of ${SSL_MODES.join(', ')}`;
}

/** An SSLRequest: its length, 8, and the code 80877103 that asks the server whether it speaks TLS. */
const SSL_REQUEST = Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]);

/** Where postgres.js connects: a host and port, or a Unix socket's file. */
type PostgresAddress = { host: string; port: number } | { path: string };

/**
 * What PostgreSQL at `address` answers an SSLRequest, the first thing postgres.js sends when its
 * SSL mode asks for TLS: `S` (it speaks TLS) or `N` (it does not); undefined when it cannot be
 * reached, answers anything else, hangs up, or says nothing within `timeoutMs`.
 */
function answerToSslRequest(address: PostgresAddress, timeoutMs: number): Promise<'S' | 'N' | undefined> {
  return new Promise((resolve) => {
    const socket = 'path' in address ? connect(address.path) : connect(address.port, address.host);
    const done = (answer: 'S' | 'N' | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answer);
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    socket.once('connect', () => socket.write(SSL_REQUEST));
    socket.once('data', (data: Buffer) => done(data[0] === 0x53 ? 'S' : data[0] === 0x4e ? 'N' : undefined));
    socket.once('error', () => done(undefined));
    socket.once('close', () => done(undefined));
  });
}

/** How long a start waits for the answer to its SSLRequest (it comes as the connection opens). */
const SSL_REQUEST_WAIT_MS = 2000;

/**
 * Asks, when the URL's SSL mode requires TLS, whether the server speaks it: a function giving why
 * a start cannot go on (every host answered that it has no TLS), or undefined. postgres.js, told
 * no, goes on with its TLS handshake, which the server reads as a malformed start-up packet and
 * hangs up on: the ECONNRESET looked like a database still starting, and an operator's trial
 * waited 60 s for a server that would never say yes. Undefined when the SSL mode does not
 * require TLS (`disable`, `prefer`).
 */
export function tlsRefusalCheck(target: PostgresTarget): (() => Promise<string | undefined>) | undefined {
  // The SSL mode and addresses as postgres.js reads them (URL, then PGSSL, PGHOST, PGPORT); the
  // client connects only for a query, and none is made.
  const parsed = postgres(target.url, {
    ...(target.host !== undefined && { host: target.host }),
    ...(target.port !== undefined && { port: target.port }),
    max: 1,
  });
  const { ssl, host, port, path } = parsed.options as unknown as {
    ssl: unknown;
    host: string[];
    port: number[];
    path: string | false;
  };
  void parsed.end();
  if (typeof ssl !== 'string' || ssl === 'prefer') return undefined;
  const params = readablePostgresUrl(target.url).searchParams;
  const setting = params.has('sslmode')
    ? `sslmode=${ssl}`
    : params.has('ssl')
      ? `ssl=${ssl}`
      : `PGSSL=${ssl}`;
  const hosts = host.map((name, i) => ({ host: name, port: port[i] ?? 5432 }));
  const addresses: PostgresAddress[] = path ? [{ path }] : hosts;
  return async () => {
    const answers = await Promise.all(addresses.map((at) => answerToSslRequest(at, SSL_REQUEST_WAIT_MS)));
    if (!answers.every((answer) => answer === 'N')) return undefined;
    if (path)
      return (
        `PostgreSQL does not use SSL over a Unix socket (${path}), which ${setting} asks for: ` +
        'leave sslmode out of a socket’s DATABASE_URL, or set sslmode=disable'
      );
    const where = hosts.map((at) => `${at.host}:${at.port}`).join(', ');
    const allow =
      ssl === 'allow'
        ? ' (postgres.js, the driver, takes allow as require: it does not fall back to a connection without TLS)'
        : '';
    return (
      `PostgreSQL at ${where} does not support SSL: it answered that it has no TLS, which ${setting} asks for${allow}; ` +
      'turn ssl on in its configuration, or set sslmode=prefer (TLS when offered) or sslmode=disable in DATABASE_URL'
    );
  };
}
