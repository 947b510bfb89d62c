/** What postgres.js is given for a PostgreSQL URL: the URL it can read, and the host it cannot. */
export interface PostgresTarget {
  readonly url: string;
  /** A host, or the directory of a Unix socket, that the URL spells as postgres.js does not read it. */
  readonly host?: string;
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
 * (a host holding a `/` is a socket's directory to it, as to libpq). The URL is left as it is
 * otherwise, its password included.
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
    ...(port !== undefined && { port: Number(port) }),
  };
}

/** Why a port of a `port` query parameter or of an encoded socket path cannot be used, or undefined. */
export function targetPortProblem(target: PostgresTarget): string | undefined {
  const { port } = target;
  if (port === undefined || (Number.isInteger(port) && port > 0 && port < 65536)) return undefined;
  return 'names a port that is not a whole number from 1 to 65535';
}
