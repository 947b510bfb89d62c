import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync } from 'node:fs';
import { type AddressInfo, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import {
  databaseUrlProblem,
  isDatabaseUnavailable,
  isMemoryUrl,
  openDatabase,
  postgresTarget,
} from '../src/db';

describe('the database URL', () => {
  it('takes PostgreSQL’s schemes in any case, as URL schemes are case-insensitive', async () => {
    for (const url of [
      'postgres://convene@localhost/convene',
      'postgresql://convene@localhost/convene',
      'POSTGRES://convene@localhost/convene',
      'PostgreSQL://convene@localhost/convene',
    ]) {
      expect({ url, problem: databaseUrlProblem(url) }).toEqual({ url, problem: undefined });
    }
    // Opened as PostgreSQL, not refused nor taken for the embedded database (it connects lazily).
    const database = await openDatabase({ url: 'POSTGRES://convene@127.0.0.1:1/convene', migrate: false });
    try {
      expect(database.engine).toBe('postgres');
    } finally {
      await database.close();
    }
  });

  it('says why a PostgreSQL URL cannot be read, rather than postgres.js’s bare “Invalid URL” or “URI malformed”', async () => {
    for (const url of [
      'postgres://convene:hunter%zz2@db/convene',
      'postgres://convene:hunter#2@db/convene',
      'postgres://convene:hunter2@db:99999/convene',
      'postgresql://convene:hunter2@[db/convene',
      'postgres://%zz@db/convene',
    ]) {
      const problem = databaseUrlProblem(url);
      expect(problem).toMatch(/^is not a URL that can be read: check its host and port, and write a %/);
      expect(problem).not.toMatch(/hunter/);
      await expect(openDatabase({ url, migrate: false })).rejects.toThrow(`the database URL ${problem}`);
    }
    // Several hosts, as postgres.js takes them, and escapes that decode.
    for (const url of ['postgres://a:5432,b:5433/convene', 'postgres://convene:p%40ss%25@db/convene'])
      expect({ url, problem: databaseUrlProblem(url) }).toEqual({ url, problem: undefined });
  });

  it('takes libpq’s spellings of a host apart: a `host` and `port` query, a percent-encoded socket directory, `user@/db`', () => {
    for (const [url, target] of [
      [
        'postgres://convene:pw@db:6432/convene?sslmode=require',
        { url: 'postgres://convene:pw@db:6432/convene?sslmode=require' },
      ],
      [
        'postgres:///convene?host=/var/run/postgresql&port=5433&sslmode=disable',
        { url: 'postgres://localhost/convene?sslmode=disable', host: '/var/run/postgresql', port: 5433 },
      ],
      [
        'postgresql://convene:p%40ss@/convene?host=%2Ftmp',
        { url: 'postgresql://convene:p%40ss@localhost/convene', host: '/tmp' },
      ],
      [
        'postgres://convene@%2Fvar%2Frun%2Fpostgresql:5434/convene',
        { url: 'postgres://convene@localhost/convene', host: '/var/run/postgresql', port: 5434 },
      ],
      // A `port` alone, beside a host the URL names: the query's, as libpq takes it.
      ['postgres://db/convene?port=6543', { url: 'postgres://db/convene', port: 6543 }],
    ] as const)
      expect({ url, target: postgresTarget(url) }).toEqual({ url, target });
    // Read, not refused; and a port that is none is named.
    for (const url of [
      'postgres://convene@/convene',
      'postgres:///convene?host=/tmp&port=5433',
      'postgresql://%2Ftmp/convene',
    ])
      expect({ url, problem: databaseUrlProblem(url) }).toEqual({ url, problem: undefined });
    for (const port of ['five', '0x10', '1e3', '0', '70000', '5.0'])
      expect(databaseUrlProblem(`postgres:///convene?host=/tmp&port=${port}`), port).toMatch(
        /port that is not a whole number/,
      );
    // An IPv6 host in the query, which postgres.js would cut to nothing (localhost); in brackets
    // in the host part it is read.
    expect(databaseUrlProblem('postgres://me@/convene?host=2001:db8::5')).toMatch(
      /IPv6 address in the host part/,
    );
    expect(databaseUrlProblem('postgres://me@[2001:db8::5]:5432/convene')).toBeUndefined();
  });

  it.runIf(socketOfTestServer())(
    'connects over a Unix socket named in a `host` query, as psql does',
    async () => {
      const { user, port, database } = socketOfTestServer()!;
      const url = `postgres://${user}@/${database}?host=/tmp&port=${port}`;
      const opened = await openDatabase({ url, migrate: false });
      try {
        const [row] = (await opened.db.execute(
          sql`select inet_server_port() as port, current_database() as db`,
        )) as unknown as { port: number | null; db: string }[];
        // No TCP port: the session came over the socket.
        expect(row).toEqual({ port: null, db: database });
      } finally {
        await opened.close();
      }
    },
  );

  it('takes a socket that is not there (its server down) for a database away, as a refused TCP connection', async () => {
    // An operator trial: PostgreSQL stopped, its socket file gone; requests answered 500, and a
    // start exited at once where it waits for a server that does not answer yet.
    const directory = mkdtempSync(join(tmpdir(), 'convene-no-server-'));
    const { url, ...at } = postgresTarget(`postgres://me@/db?host=${directory}&port=5999`);
    const client = postgres(url, { ...at, max: 1 });
    const error = await client`select 1`.catch((caught: unknown) => caught);
    await client.end();
    expect(error).toMatchObject({ code: 'ENOENT', syscall: 'connect' });
    expect(isDatabaseUnavailable(error)).toBe(true);
    // No other missing file is.
    expect(isDatabaseUnavailable(Object.assign(new Error('x'), { code: 'ENOENT', syscall: 'open' }))).toBe(
      false,
    );
  });

  it('refuses an sslmode that is none of libpq’s, which postgres.js took for verify-full', () => {
    for (const mode of ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'])
      expect({ mode, problem: databaseUrlProblem(`postgres://me:pw@db/convene?sslmode=${mode}`) }).toEqual({
        mode,
        problem: undefined,
      });
    for (const mode of ['requir', 'Require', 'true', 'false', 'no', ''])
      expect(databaseUrlProblem(`postgres://me:hunter2@db/convene?sslmode=${mode}`), mode).toBe(
        `has sslmode=${mode}, which is none of disable, allow, prefer, require, verify-ca, verify-full`,
      );
    // Every one given is checked (postgres.js reads the last), beside a host given apart too.
    expect(databaseUrlProblem('postgres://db/convene?sslmode=require&sslmode=on')).toMatch(
      /^has sslmode=on,/,
    );
    expect(databaseUrlProblem('postgres:///convene?host=/tmp&sslmode=bogus')).toMatch(/^has sslmode=bogus,/);
  });

  it('fails at once when the SSL mode requires TLS and PostgreSQL answers it has none; waits for one that is away', async () => {
    // A PostgreSQL with ssl off, as it answers postgres.js: no (N) to the SSLRequest, then a
    // hang-up when the TLS handshake comes as a start-up packet ("invalid length of startup packet").
    const noTls = await listening((socket) => {
      socket.once('data', () => {
        socket.write('N');
        socket.once('data', () => socket.destroy());
      });
    });
    // A server with TLS going away: yes (S) to the SSLRequest, then a hang-up in the handshake.
    const goingAway = await listening((socket) => {
      socket.once('data', () => {
        socket.write('S');
        socket.once('data', () => socket.destroy());
      });
    });
    // Nothing listening (its port free again): connection refused.
    const closed = await listening(() => {});
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const at = (server: Server | number, mode: string) =>
      `postgres://me:hunter2@127.0.0.1:${typeof server === 'number' ? server : (server.address() as AddressInfo).port}/convene?sslmode=${mode}`;
    try {
      const unreachable: string[] = [];
      const started = Date.now();
      const refusals = await Promise.all(
        ['require', 'verify-full', 'allow'].map((mode) =>
          openDatabase({
            url: at(noTls, mode),
            waitForServerMs: 3000,
            onUnreachable: (message) => unreachable.push(message),
          }).catch((error: Error) => error.message),
        ),
      );
      // It was waited out, 60 s at start, as a database still starting (an operator's trial).
      expect(Date.now() - started).toBeLessThan(2500);
      expect(unreachable).toEqual([]);
      const port = (noTls.address() as AddressInfo).port;
      expect(refusals[0]).toBe(
        `PostgreSQL at 127.0.0.1:${port} does not support SSL: it answered that it has no TLS, which sslmode=require asks for; ` +
          'turn ssl on in its configuration, or set sslmode=prefer (TLS when offered) or sslmode=disable in DATABASE_URL',
      );
      expect(refusals[1]).toMatch(/does not support SSL: .* sslmode=verify-full asks for;/);
      expect(refusals[2]).toMatch(
        /sslmode=allow asks for \(postgres\.js, the driver, takes allow as require/,
      );
      // A server away (connection refused), or one with TLS hanging up: waited for, as ever.
      const waited = await Promise.all(
        [goingAway, closedPort].map(async (server) => {
          const told: string[] = [];
          const error = await openDatabase({
            url: at(server, 'require'),
            waitForServerMs: 600,
            onUnreachable: (message) => told.push(message),
          }).catch((caught: unknown) => caught);
          return { unavailable: isDatabaseUnavailable(error), told };
        }),
      );
      for (const { unavailable, told } of waited) {
        expect(unavailable).toBe(true);
        expect(told.length).toBeGreaterThan(0);
        expect(told[0]).toMatch(/^PostgreSQL cannot be reached/);
      }
    } finally {
      await Promise.all([noTls, goingAway].map((server) => new Promise((resolve) => server.close(resolve))));
    }
  });

  it('gives up, as on a server away, on one that takes the connection and hangs up before answering', async () => {
    // A proxy whose database is away: it reads the start-up packet, says nothing, and hangs up.
    // postgres.js connected again and again for ever, and the start's first statement waited on.
    const mute = await listening((socket) => {
      socket.on('error', () => {});
      socket.once('data', () => setTimeout(() => socket.destroy(), 20));
    });
    try {
      const told: string[] = [];
      const started = Date.now();
      const error = await openDatabase({
        url: `postgres://me:hunter2@127.0.0.1:${(mute.address() as AddressInfo).port}/convene?sslmode=disable`,
        waitForServerMs: 400,
        firstAnswerMs: 300,
        onUnreachable: (message) => told.push(message),
      }).catch((caught: unknown) => caught);
      expect(isDatabaseUnavailable(error)).toBe(true);
      expect((error as Error).message).toMatch(
        /^no answer within 0\.3 s: it took the connection and said nothing/,
      );
      expect(told[0]).toMatch(/^PostgreSQL cannot be reached \(no answer within 0\.3 s/);
      expect(told.join('\n')).not.toContain('hunter2');
      // Each attempt's pool is closed: nothing waits on, nothing connects again.
      expect(Date.now() - started).toBeLessThan(15_000);
    } finally {
      await new Promise((resolve) => mute.close(resolve));
    }
  });

  it('says that PostgreSQL has no TLS over a Unix socket, when a socket’s URL requires it', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'convene-socket-tls-'));
    const server = createServer((socket) =>
      socket.once('data', () => {
        socket.write('N');
        socket.once('data', () => socket.destroy());
      }),
    );
    await new Promise<void>((resolve) => server.listen(join(directory, '.s.PGSQL.5999'), resolve));
    try {
      await expect(
        openDatabase({
          url: `postgres://me@/db?host=${directory}&port=5999&sslmode=require`,
          waitForServerMs: 3000,
        }),
      ).rejects.toThrow(
        `PostgreSQL does not use SSL over a Unix socket (${directory}/.s.PGSQL.5999), which sslmode=require asks for: ` +
          'leave sslmode out of a socket’s DATABASE_URL, or set sslmode=disable',
      );
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('takes memory:// in any case, and opens it in memory, not under a data directory', async () => {
    for (const url of ['memory://', 'MEMORY://', 'Memory://']) {
      expect({ url, problem: databaseUrlProblem(url), memory: isMemoryUrl(url) }).toEqual({
        url,
        problem: undefined,
        memory: true,
      });
    }
    expect(isMemoryUrl('memory://x')).toBe(false);
    expect(isMemoryUrl(undefined)).toBe(false);
    const dataDir = join(mkdtempSync(join(tmpdir(), 'convene-memory-url-')), 'data');
    const database = await openDatabase({ url: 'MEMORY://', dataDir, migrate: false });
    try {
      expect(database.engine).toBe('pglite');
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      await database.close();
    }
  });

  it('still refuses other schemes, naming only the scheme', () => {
    expect(databaseUrlProblem('mysql://root:hunter2@db/x')).toMatch(/, not a mysql: URL$/);
    expect(databaseUrlProblem('POSTGRESX://db/x')).toMatch(/, not a POSTGRESX: URL$/);
    expect(databaseUrlProblem('db.example.com/convene')).toMatch(/has no scheme$/);
  });

  it.runIf(process.env.TEST_DATABASE_URL)('connects with the scheme in capitals', async () => {
    const url = process.env.TEST_DATABASE_URL!.replace(/^[a-z]+:/i, (scheme) => scheme.toUpperCase());
    const database = await openDatabase({ url, migrate: false });
    try {
      expect(await database.db.execute(sql`select 1 as one`)).toBeTruthy();
    } finally {
      await database.close();
    }
  });

  it.runIf(process.env.TEST_DATABASE_URL)(
    'says what PostgreSQL refused of the migrations, in its words and SQLSTATE, never the statement',
    async () => {
      const admin = await openDatabase({ url: process.env.TEST_DATABASE_URL!, migrate: false });
      const name = `norights_${randomBytes(4).toString('hex')}`;
      const password = `pw-${randomBytes(8).toString('hex')}`;
      try {
        // A role that can log in to a database it does not own: since PostgreSQL 15 it may not
        // create tables in its public schema.
        await admin.db.execute(sql.raw(`create role ${name} login password '${password}'`));
        await admin.db.execute(sql.raw(`create database ${name}`));
        const url = new URL(process.env.TEST_DATABASE_URL!);
        url.username = name;
        url.password = password;
        url.pathname = `/${name}`;
        const refused = await openDatabase({ url: url.toString() }).catch((error: Error) => error);
        expect(refused).toBeInstanceOf(Error);
        expect((refused as Error).message).toBe(
          "PostgreSQL refused a statement of the start's migrations: permission denied for schema public (SQLSTATE 42501): the nodes' role lacks a right it needs; give it a database it owns (README, PostgreSQL)",
        );
        expect((refused as Error).message).not.toContain(password);
      } finally {
        await admin.db.execute(sql.raw(`drop database if exists ${name}`)).catch(() => {});
        await admin.db.execute(sql.raw(`drop role if exists ${name}`)).catch(() => {});
        await admin.close();
      }
    },
  );
});

/**
 * The test server's user, port and database when it also listens on a socket in /tmp (as
 * scripts/test-postgres.sh starts it), for a connection over that socket.
 */
function socketOfTestServer(): { user: string; port: string; database: string } | undefined {
  const given = process.env.TEST_DATABASE_URL;
  if (!given) return undefined;
  const url = new URL(given);
  const port = url.port || '5432';
  if (!['127.0.0.1', 'localhost'].includes(url.hostname) || !existsSync(`/tmp/.s.PGSQL.${port}`))
    return undefined;
  return {
    user: decodeURIComponent(url.username) || 'postgres',
    port,
    database: url.pathname.slice(1) || 'postgres',
  };
}

/** A TCP server on a free loopback port, each connection given to `onConnection`. */
async function listening(onConnection: (socket: import('node:net').Socket) => void): Promise<Server> {
  const server = createServer(onConnection);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}
