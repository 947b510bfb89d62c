import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, rowsOf } from '@convene/core';
import { createPostgresTestDatabase, testDatabaseServerUrl } from '@convene/core/testing';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/env';
import { createServer } from '../src/server';
import { onPostgres } from './helpers';

const OWN = 'own-secret-0123456789abcdef';
const OTHER = 'other-secret-0123456789abcdef';
/** The seeded webhook points at the loopback (never called: no event is sent). */
const LOOPBACK_WEBHOOKS = { WEBHOOK_ALLOW_NETWORKS: '127.0.0.1' };

/** What a deployment holds sealed under SECRET, as its users see it. */
interface Held {
  jwt: string;
  spaceId: string;
  ownerKey: string;
  /** The webhook's signing secret, sealed so that deliveries can be signed. */
  webhookSecret: string;
}

/** The webhook is registered with an Idempotency-Key: its recorded answer (with the secret) is sealed. */
const registerWebhook = (held: Pick<Held, 'spaceId' | 'ownerKey'>) => ({
  method: 'POST' as const,
  url: `/hub/space/${held.spaceId}/webhooks`,
  headers: { 'x-private-key': held.ownerKey, 'idempotency-key': 'webhook-kept' },
  payload: { url: 'http://127.0.0.1:9/hooks' },
});

type Start = (env: Record<string, string>) => ReturnType<typeof createServer>;

/** A human with a dashboard session who created a space: its key is kept sealed to be handed back. */
async function seed(start: Start): Promise<Held> {
  const server = await start({});
  try {
    const signedUp = await server.app.inject({
      method: 'POST',
      url: '/hub/auth/signup',
      payload: { email: 'operator@example.com', password: 'correct horse battery' },
    });
    expect(signedUp.statusCode, signedUp.body).toBe(201);
    const jwt = signedUp.json().token as string;
    const minted = await server.app.inject({
      method: 'POST',
      url: '/hub/me/tokens',
      headers: { authorization: `Bearer ${jwt}` },
      payload: {},
    });
    expect(minted.statusCode, minted.body).toBe(201);
    const userToken = minted.json().token as string;
    const created = await server.app.inject({
      method: 'POST',
      url: '/hub/space',
      headers: { 'x-user-token': userToken },
      payload: { name: 'Kept', description: 'sealed keys' },
    });
    expect(created.statusCode, created.body).toBe(200);
    const { spaceId, ownerPrivateKey: ownerKey } = created.json();
    const webhook = await server.app.inject(registerWebhook({ spaceId, ownerKey }));
    expect(webhook.statusCode, webhook.body).toBe(201);
    return { jwt, spaceId, ownerKey, webhookSecret: webhook.json().secret };
  } finally {
    await server.close();
  }
}

/** The session still works and the sealed key still opens: nothing was lost to the change. */
async function expectHeld(start: Start, env: Record<string, string>, held: Held): Promise<void> {
  const server = await start(env);
  try {
    const me = await server.app.inject({
      method: 'GET',
      url: '/hub/me',
      headers: { authorization: `Bearer ${held.jwt}` },
    });
    expect(me.statusCode, me.body).toBe(200);
    const key = await server.app.inject({
      method: 'GET',
      url: `/hub/space/${held.spaceId}/key`,
      headers: { authorization: `Bearer ${held.jwt}` },
    });
    expect(key.statusCode, key.body).toBe(200);
    expect(key.json().privateKey).toBe(held.ownerKey);
    const replayed = await server.app.inject(registerWebhook(held));
    expect(replayed.headers['idempotency-replayed']).toBe('true');
    expect(replayed.json().secret).toBe(held.webhookSecret);
    const [webhook] = rowsOf<{ secret_enc: string }>(
      await server.deps.db.execute(sql`select secret_enc from webhooks`),
    );
    expect(server.deps.box.decrypt(webhook!.secret_enc)).toBe(held.webhookSecret);
  } finally {
    await server.close();
  }
}

/**
 * The same story on each engine: a deployment started without SECRET (a generated one) moves to
 * a SECRET of the operator's own, then to another with PREVIOUS_SECRET; sessions and sealed keys
 * survive each change, the generated SECRET is forgotten, and a SECRET that is neither the
 * current nor given with the previous one is refused.
 */
async function story(start: Start, generatedKept: () => Promise<boolean>): Promise<void> {
  const held = await seed(start);
  expect(await generatedKept()).toBe(true);

  await expectHeld(start, { SECRET: OWN }, held);
  expect(await generatedKept()).toBe(false);
  // Again: nothing left to do, and the same SECRET opens everything.
  await expectHeld(start, { SECRET: OWN }, held);

  await expect(start({ SECRET: OTHER })).rejects.toThrow(/PREVIOUS_SECRET/);
  await expectHeld(start, { SECRET: OTHER, PREVIOUS_SECRET: OWN }, held);
  // The change is done once: the old SECRET no longer opens the deployment.
  await expect(start({ SECRET: OWN })).rejects.toThrow(/cannot be read with this SECRET/);
  // A PREVIOUS_SECRET left set after the change is harmless.
  await expectHeld(start, { SECRET: OTHER, PREVIOUS_SECRET: OWN }, held);
  await expect(start({ SECRET: `${OWN}-x`, PREVIOUS_SECRET: `${OWN}-y` })).rejects.toThrow(
    /neither SECRET nor PREVIOUS_SECRET/,
  );
}

/** A new embedded deployment under a DATA_DIR of its own; with `logStream`, its log at info. */
async function onEmbedded(
  test: (start: Start, dataDir: string) => Promise<void>,
  logStream?: { write(line: string): void },
): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'convene-secret-change-'));
  try {
    const level = logStream ? 'info' : 'silent';
    const start: Start = (env) =>
      createServer(
        loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: level, PORT: '0', ...LOOPBACK_WEBHOOKS, ...env }),
        logStream ? { logStream } : { logger: false },
      );
    await test(start, dataDir);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

describe('changing SECRET', () => {
  it('on embedded PGlite: the generated one is replaced, then a chosen one', () =>
    onEmbedded((start, dataDir) => story(start, async () => existsSync(join(dataDir, 'secret')))));

  it.runIf(onPostgres())('on PostgreSQL: the generated one is replaced, then a chosen one', async () => {
    const pg = await createPostgresTestDatabase(testDatabaseServerUrl()!);
    try {
      // A password to seal the generated SECRET with (the test server accepts any).
      const url = new URL(pg.url);
      url.password = 'db-password';
      const start: Start = (env) =>
        createServer(
          loadConfig({
            DATABASE_URL: url.toString(),
            LOG_LEVEL: 'silent',
            PORT: '0',
            ...LOOPBACK_WEBHOOKS,
            ...env,
          }),
          {
            logger: false,
          },
        );
      await story(start, async () => {
        const database = await openDatabase({ url: pg.url, maxConnections: 1 });
        try {
          const rows = rowsOf<{ key: string }>(
            await database.db.execute(sql`select key from settings where key like 'secret%'`),
          );
          return rows.length > 0;
        } finally {
          await database.close();
        }
      });
    } finally {
      await pg.drop();
    }
  });

  it('refuses a data directory copied without its generated SECRET, naming the file, and writes none', () =>
    onEmbedded(async (start, dataDir) => {
      await seed(start);
      rmSync(join(dataDir, 'secret'));
      await expect(start({})).rejects.toThrow(
        /secret is missing.*restore that file with the data, or set SECRET/,
      );
      expect(existsSync(join(dataDir, 'secret'))).toBe(false);
    }));

  it('says what it did, and never the SECRETs', async () => {
    const lines: string[] = [];
    await onEmbedded(
      async (start) => {
        await seed(start);
        await (await start({ SECRET: OWN })).close();
      },
      { write: (line) => void lines.push(line) },
    );
    const log = lines.join('\n');
    expect(log).toMatch(/SECRET changed: \d+ sealed values were sealed again under the new one/);
    expect(log).toMatch(/the generated SECRET was replaced/);
    expect(log).not.toContain(OWN);
  });
});
