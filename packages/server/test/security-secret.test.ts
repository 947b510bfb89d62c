import { openDatabase, rowsOf } from '@convene/core';
import { createPostgresTestDatabase, testDatabaseServerUrl } from '@convene/core/testing';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type ServerConfig } from '../src/env';
import { createServer } from '../src/server';
import { onPostgres } from './helpers';

/**
 * A generated SECRET is kept in the database (every node sharing it must agree) but never in
 * clear: sealed under a key derived from the database password, which a copy of the data lacks.
 */
describe.runIf(onPostgres())('the generated SECRET on PostgreSQL', () => {
  let url: string;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    ({ url, drop } = await createPostgresTestDatabase(testDatabaseServerUrl()!));
  });
  afterAll(() => drop?.());

  /** The test server trusts loopback: any password connects, which lets a test change it. */
  const withPassword = (password: string | undefined) => {
    const u = new URL(url);
    u.password = password ?? '';
    return u.toString();
  };
  const configFor = (password: string | undefined, extra: Record<string, string> = {}): ServerConfig =>
    loadConfig({ DATABASE_URL: withPassword(password), LOG_LEVEL: 'silent', PORT: '0', ...extra });
  const open = (config: ServerConfig) => createServer(config, { logger: false });
  /** The settings table as a copy of the database would show it. */
  const settings = async (databaseUrl: string) => {
    const database = await openDatabase({ url: databaseUrl, maxConnections: 1 });
    try {
      return rowsOf<{ key: string; value: string }>(
        await database.db.execute(sql`select key, value from settings order by key`),
      );
    } finally {
      await database.close();
    }
  };

  it('is kept unsealed, with a warning, when there is no database password to seal it with', async () => {
    const scratch = await createPostgresTestDatabase(testDatabaseServerUrl()!);
    try {
      const u = new URL(scratch.url);
      u.password = '';
      const config = loadConfig({ DATABASE_URL: u.toString(), LOG_LEVEL: 'warn', PORT: '0' });
      const lines: string[] = [];
      const logStream = { write: (line: string) => void lines.push(line) };
      const a = await createServer(config, { logStream });
      const b = await createServer(config, { logger: false });
      try {
        // Both nodes start and agree, as decisions.md promises of an unset SECRET.
        expect(b.deps.box.current.decrypt(a.deps.box.current.encrypt('shared'))).toBe('shared');
      } finally {
        await a.close();
        await b.close();
      }
      expect(lines.join('\n')).toMatch(/SECRET is unset and DATABASE_URL names no password/);
      // The warning names the problem, never the secret.
      const rows = await settings(scratch.url);
      const clear = rows.find((r) => r.key === 'secret')?.value;
      expect(clear).toMatch(/^[0-9a-f]{64}$/);
      expect(lines.join('\n')).not.toContain(clear);
      // Once connected with a password, it is sealed and the unsealed copy deleted.
      u.password = 'db-password-0';
      const sealed = await createServer(
        loadConfig({ DATABASE_URL: u.toString(), LOG_LEVEL: 'silent', PORT: '0' }),
        {
          logger: false,
        },
      );
      await sealed.close();
      expect((await settings(scratch.url)).map((r) => r.key)).not.toContain('secret');
    } finally {
      await scratch.drop();
    }
  });

  it('is sealed, the same for every node, and never stored in clear', async () => {
    const config = configFor('db-password-1');
    const a = await open(config);
    const b = await open(config);
    try {
      // Each node opens what the other sealed: they hold the same SECRET.
      expect(b.deps.box.current.decrypt(a.deps.box.current.encrypt('shared'))).toBe('shared');
    } finally {
      await a.close();
      await b.close();
    }
    const rows = await settings(url);
    expect(rows.map((r) => r.key)).toContain('secret-sealed');
    expect(rows.map((r) => r.key)).not.toContain('secret');
    // Not the hex of a 32-byte secret anywhere in the table.
    expect(JSON.stringify(rows)).not.toMatch(/"[0-9a-f]{64}"/);
  });

  it('opens only with the password it was sealed with, and is resealed after a change', async () => {
    await expect(open(configFor('another-password'))).rejects.toThrow(/PREVIOUS_DATABASE_PASSWORD/);
    const first = await open(configFor('db-password-1'));
    const sealedBefore = first.deps.box.current.encrypt('kept');
    await first.close();
    /** Opens with warnings logged, and gives them. */
    const warnedOpening = async (config: ServerConfig) => {
      const lines: string[] = [];
      const server = await createServer(
        { ...config, logLevel: 'warn' },
        { logStream: { write: (line: string) => void lines.push(line) } },
      );
      return { server, warned: lines.map((line) => JSON.parse(line).msg as string) };
    };
    const previous = { PREVIOUS_DATABASE_PASSWORD: 'db-password-1' };
    const moved = await warnedOpening(configFor('db-password-2', previous));
    expect(moved.server.deps.box.current.decrypt(sealedBefore)).toBe('kept');
    await moved.server.close();
    // Told when the variable may go: at the start that resealed, and at any later one still given it.
    expect(moved.warned).toContain(
      'the generated SECRET was sealed again with the current database password: remove PREVIOUS_DATABASE_PASSWORD from every node',
    );
    const late = await warnedOpening(configFor('db-password-2', previous));
    await late.server.close();
    expect(late.warned.some((msg) => msg.startsWith('PREVIOUS_DATABASE_PASSWORD is set, but'))).toBe(true);
    // From now on the new password alone opens it.
    const again = await open(configFor('db-password-2'));
    expect(again.deps.box.current.decrypt(sealedBefore)).toBe('kept');
    await again.close();
  });

  it('refuses to start without SECRET on a database set up with one, writing nothing', async () => {
    const scratch = await createPostgresTestDatabase(testDatabaseServerUrl()!);
    try {
      const u = new URL(scratch.url);
      u.password = 'db-password-4';
      const base = { DATABASE_URL: u.toString(), LOG_LEVEL: 'silent', PORT: '0' };
      const secret = 'an operator secret of 32 chars!!';
      await (await open(loadConfig({ ...base, SECRET: secret }))).close();
      const before = await settings(scratch.url);
      await expect(open(loadConfig(base))).rejects.toThrow(
        /^SECRET is not set, but this database was set up with one/,
      );
      // No generated SECRET left behind: the next start with the right one is as before.
      expect(await settings(scratch.url)).toEqual(before);
      await (await open(loadConfig({ ...base, SECRET: secret }))).close();
    } finally {
      await scratch.drop();
    }
  });

  it('moves a secret an earlier version kept in clear under the seal', async () => {
    const { url: legacyUrl, drop: dropLegacy } = await createPostgresTestDatabase(testDatabaseServerUrl()!);
    try {
      const legacy = new URL(legacyUrl);
      legacy.password = 'db-password-3';
      const config = loadConfig({ DATABASE_URL: legacy.toString(), LOG_LEVEL: 'silent', PORT: '0' });
      const clear = 'c'.repeat(64);
      const seed = await openDatabase({ url: legacyUrl, maxConnections: 1 });
      await seed.db.execute(sql`insert into settings (key, value) values ('secret', ${clear})`);
      await seed.close();
      await (await open(config)).close();
      const rows = await settings(legacyUrl);
      expect(rows.map((r) => r.key)).not.toContain('secret');
      expect(JSON.stringify(rows)).not.toContain(clear);
      // The same SECRET as before: what it sealed still opens.
      const check = await open({ ...config, secret: clear });
      const sealedWithOld = check.deps.box.current.encrypt('x');
      await check.close();
      const after = await open(config);
      expect(after.deps.box.current.decrypt(sealedWithOld)).toBe('x');
      await after.close();
    } finally {
      await dropLegacy();
    }
  });
});
