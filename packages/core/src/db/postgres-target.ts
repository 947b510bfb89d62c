/** What postgres.js is given for a PostgreSQL URL: the URL it can read, and the host it cannot. */
export interface PostgresTarget {
  readonly url: string;
  /** A host, or the directory of a Unix socket, that the URL spells as postgres.js does not read it. */
  readonly host?: string;
  /** NaN for one not written in decimal digits (see targetProblem). */
  readonly port?: number;
}

/** A directory, percent-encoded in a URL's host (libpq's `postgresql://%2Fvar%2Frun%2Fpostgresql/db`). */
const ENCODED_PATH = /^%2f/i;
/** The URL's host when its own does not parse as one: a stand-in, for the host given apart. */
const STAND_IN = 'localhost';

/**
 * A PostgreSQL URL as postgres.js reads it. libpq (psql, most tools) also takes the host, a Unix
 * socket's directory most often, as a `host` query parameter (`postgres:///convene?host=
 * /var/run/postgresql`, with `port` beside it) or percent-encoded in the host's place
 * (`postgres://%2Fvar%2Frun%2Fpostgresql/convene`); postgres.js read neither: it connected to
 * localhost:5432 over TCP and sent `host` to the server as a setting, or looked up `%2Fvar…` as
 * a host name. Those spellings are taken out of the URL here and given to postgres.js as options
 * (a host holding a `/` is a socket's directory to it, as to libpq). The rest of the URL means
 * what it meant, its password included (the query's other parameters are encoded again).
 */
export function postgresTarget(url: string): PostgresTarget {
  const query = url.indexOf('?');
  const base = query < 0 ? url : url.slice(0, query);
  const params = new URLSearchParams(query < 0 ? '' : url.slice(query + 1));
  const start = base.indexOf('://') + 3;
  const end = base.indexOf('/', start);
  const authority = base.slice(start, end < 0 ? undefined : end);
  const hostAt = authority.indexOf('@') + 1;
  let hostPart = authority.slice(hostAt);
  let host = params.get('host') ?? undefined;
  let port = params.get('port') ?? undefined;
  if (ENCODED_PATH.test(hostPart)) {
    const colon = hostPart.lastIndexOf(':');
    const encodedPort =
      colon > 0 && /^\d+$/.test(hostPart.slice(colon + 1)) ? hostPart.slice(colon + 1) : undefined;
    host ??= decodeURIComponent(encodedPort ? hostPart.slice(0, colon) : hostPart);
    port ??= encodedPort;
    hostPart = STAND_IN;
  } else if (hostPart === '' && (host !== undefined || hostAt > 0)) {
    // `user@/convene` (libpq's default host) does not parse as a URL: the host postgres.js
    // takes when the URL names none, PGHOST or localhost, is given apart.
    host ??= process.env.PGHOST || STAND_IN;
    hostPart = STAND_IN;
  }
  if (host === undefined && port === undefined) return { url };
  params.delete('host');
  params.delete('port');
  const rest = params.toString();
  const rebuilt = `${base.slice(0, start)}${authority.slice(0, hostAt)}${hostPart}${end < 0 ? '' : base.slice(end)}${rest ? `?${rest}` : ''}`;
  return {
    url: rebuilt,
    ...(host !== undefined && { host }),
    // `0x10`, `1e3` and ` 5` are numbers to JavaScript, not to libpq.
    ...(port !== undefined && { port: /^\d+$/.test(port) ? Number(port) : Number.NaN }),
  };
}

/**
 * Why a host or port given apart cannot be used, or undefined: a port that is not 1 to 65535 in
 * decimal digits, and an IPv6 address in a `host` query, which postgres.js cuts at its first `:`
 * (an empty host: localhost, without a word). In the URL's own host, in brackets, an IPv6 address
 * is read as it should be.
 */
export function targetProblem({ port, host }: PostgresTarget): string | undefined {
  if (port !== undefined && !(Number.isInteger(port) && port >= 1 && port <= 65535))
    return 'names a port that is not a whole number from 1 to 65535';
  if (host?.includes(':'))
    return 'names a host with a colon in its host query: write an IPv6 address in the host part, in brackets (postgres://user@[::1]:5432/db)';
  return undefined;
}

/**
 * A PostgreSQL URL (postgresTarget's) as a URL object, read as postgres.js reads it: several
 * comma-separated hosts (`a:5432,b:5433`) are not a URL, so it is read with the first. Throws
 * when it cannot be read.
 */
export function readablePostgresUrl(url: string): URL {
  const authority = url.slice(url.indexOf('://') + 3).split(/[?/]/)[0] ?? '';
  const hosts = decodeURIComponent(authority.slice(authority.indexOf('@') + 1));
  return new URL(url.replace(hosts, hosts.split(',')[0] ?? ''));
}

/**
 * The password a PostgreSQL URL names (in any spelling postgresTarget reads, several hosts
 * included), as written and decoded (undefined when it does not decode); undefined when the URL
 * names none or cannot be read.
 */
export function postgresPassword(url: string): { written: string; decoded: string | undefined } | undefined {
  let written: string;
  try {
    written = readablePostgresUrl(postgresTarget(url).url).password;
  } catch {
    return undefined;
  }
  if (!written) return undefined;
  try {
    return { written, decoded: decodeURIComponent(written) };
  } catch {
    return { written, decoded: undefined };
  }
}
