import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  adoptSecret,
  claimWebhookDeliveries,
  openDatabase,
  resealSecrets,
  rowsOf,
  Sealer,
  SecretBox,
} from '@convene/core';
import { createPostgresTestDatabase, testDatabaseServerUrl } from '@convene/core/testing';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/env';
import { type ConveneServer, createServer } from '../src/server';
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

/** A human signs up, mints a `usr_` token and creates a space linked to them: its key is kept sealed. */
async function linkedSpace(server: ConveneServer, name = 'Kept') {
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
    payload: { name, description: 'sealed keys' },
  });
  expect(created.statusCode, created.body).toBe(200);
  const { spaceId, ownerPrivateKey: ownerKey } = created.json();
  return { jwt, userToken, spaceId: spaceId as string, ownerKey: ownerKey as string };
}

/** A human with a dashboard session who created a space: its key is kept sealed to be handed back. */
async function seed(start: Start): Promise<Held> {
  const server = await start({});
  try {
    const { jwt, spaceId, ownerKey } = await linkedSpace(server);
    const webhook = await server.app.inject(registerWebhook({ spaceId, ownerKey }));
    expect(webhook.statusCode, webhook.body).toBe(201);
    return { jwt, spaceId, ownerKey, webhookSecret: webhook.json().secret };
  } finally {
    await server.close();
  }
}

/** The key of a linked space, as its human recovers it. */
const keyOf = (server: ConveneServer, jwt: string, spaceId: string) =>
  server.app.inject({
    method: 'GET',
    url: `/hub/space/${spaceId}/key`,
    headers: { authorization: `Bearer ${jwt}` },
  });

/** The sealed copy of the owner's key of a space, as stored. */
async function storedKey(server: ConveneServer, spaceId: string): Promise<string> {
  const [row] = rowsOf<{ key_enc: string }>(
    await server.deps.db.execute(
      sql`select key_enc from participants where space_id = ${spaceId} and is_owner`,
    ),
  );
  return row!.key_enc;
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
    expect(server.deps.box.current.decrypt(webhook!.secret_enc)).toBe(held.webhookSecret);
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

// Each story starts the server three to five times over (on PGlite, each start opens the data
// directory): 11 to 23 s on CI, past 30 s on a machine loaded by other work.
/**
 * The stories on embedded PGlite open a DATA_DIR of their own whatever TEST_DATABASE_URL says: run
 * on the PostgreSQL project too, they would only repeat themselves (50 s of CI).
 */
const embedded = it.runIf(!onPostgres());

describe('changing SECRET', { timeout: 90_000 }, () => {
  embedded('on embedded PGlite: the generated one is replaced, then a chosen one', () =>
    onEmbedded((start, dataDir) => story(start, async () => existsSync(join(dataDir, 'secret')))),
  );

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

  embedded(
    'refuses a data directory copied without its generated SECRET, naming the file, and writes none',
    () =>
      onEmbedded(async (start, dataDir) => {
        await seed(start);
        rmSync(join(dataDir, 'secret'));
        await expect(start({})).rejects.toThrow(
          /secret is missing.*restore that file with the data, or set SECRET/,
        );
        expect(existsSync(join(dataDir, 'secret'))).toBe(false);
      }),
  );

  embedded('says what it did, and never the SECRETs', async () => {
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

  embedded(
    'a node left on the old SECRET while another changes it refuses (503) what it would seal or open, says why once, and loses nothing it acknowledged',
    async () => {
      const lines: string[] = [];
      await onEmbedded(
        async (start) => {
          const stale = await start({ SECRET: OWN });
          let held: Awaited<ReturnType<typeof linkedSpace>>;
          try {
            held = await linkedSpace(stale);
            const webhook = await stale.app.inject(registerWebhook(held));
            expect(webhook.statusCode, webhook.body).toBe(201);
            const webhookSecret = webhook.json().secret as string;
            // Another node starts with the new SECRET and PREVIOUS_SECRET (as it would on PostgreSQL):
            // the deployment moves under the new SECRET.
            const [own, other] = [new SecretBox(OWN), new SecretBox(OTHER)];
            expect(await adoptSecret(stale.deps.db, other, own)).toBe('changed');
            await resealSecrets(stale.deps.db, own, other);

            const spaces = async () =>
              rowsOf<{ n: number }>(
                await stale.deps.db.execute(sql`select count(*)::int as n from spaces`),
              )[0]!.n;
            const before = await spaces();
            const linked = await stale.app.inject({
              method: 'POST',
              url: '/hub/space',
              headers: { 'x-user-token': held.userToken },
              payload: { name: 'made on the stale node', description: 'd' },
            });
            expect(linked.statusCode, linked.body).toBe(503);
            expect(linked.json()).toMatchObject({ code: 'unavailable' });
            expect(linked.headers['retry-after']).toBeDefined();
            // Refused as a whole: no space without its key.
            expect(await spaces()).toBe(before);
            const key = await keyOf(stale, held.jwt, held.spaceId);
            expect(key.statusCode, key.body).toBe(503);
            // What needs no sealed value is served.
            const sent = await stale.app.inject({
              method: 'POST',
              url: `/hub/space/${held.spaceId}/messages`,
              headers: { 'x-private-key': held.ownerKey },
              payload: { content: 'still served' },
            });
            expect(sent.statusCode, sent.body).toBe(200);
            // A delivery due to the webhook (another participant's message would queue one).
            await stale.deps.db.execute(sql`
            insert into webhook_deliveries (space_id, id, webhook_id, payload, created_at, next_attempt_at)
            values (${held.spaceId}, gen_random_uuid(), ${webhook.json().id}, '{}', now(), now() - interval '1 second')`);
            // The stale node claims no delivery (it could not sign it); a node on the new SECRET does.
            expect(await claimWebhookDeliveries({ deps: stale.deps, limit: 10, leaseMs: 60_000 })).toEqual(
              [],
            );
            const attempts = rowsOf<{ attempts: number }>(
              await stale.deps.db.execute(sql`select attempts from webhook_deliveries`),
            );
            expect(attempts).toEqual([{ attempts: 0 }]);
            const claimed = await claimWebhookDeliveries({
              deps: { ...stale.deps, box: new Sealer(other) },
              limit: 10,
              leaseMs: 60_000,
            });
            expect(claimed.map((delivery) => delivery.secret)).toEqual([webhookSecret]);
          } finally {
            await stale.close();
          }
          const log = lines.join('');
          expect(log.match(/restarted with the new SECRET/g)).toHaveLength(1);
          expect(log).toMatch(/"level":50[^\n]*restarted with the new SECRET/);
          expect(log).not.toContain(OWN);
          expect(log).not.toContain(OTHER);

          // Restarted as it should be: everything acknowledged opens.
          const restarted = await start({ SECRET: OTHER, PREVIOUS_SECRET: OWN });
          try {
            const key = await keyOf(restarted, held.jwt, held.spaceId);
            expect(key.statusCode, key.body).toBe(200);
            expect(key.json().privateKey).toBe(held.ownerKey);
          } finally {
            await restarted.close();
          }
        },
        { write: (line) => void lines.push(line) },
      );
    },
  );

  embedded(
    'opens a value still sealed under PREVIOUS_SECRET after the change and seals it again, when read and at the next start with PREVIOUS_SECRET',
    async () => {
      const lines: string[] = [];
      await onEmbedded(
        async (start) => {
          const first = await start({ SECRET: OWN });
          const held = await linkedSpace(first).finally(() => first.close());
          const changed = await start({ SECRET: OTHER, PREVIOUS_SECRET: OWN });
          const own = new SecretBox(OWN);
          const other = new SecretBox(OTHER);
          // Sealed under the old SECRET after the change (a node of a version that did not check).
          const late = async (server: ConveneServer) =>
            server.deps.db.execute(
              sql`update participants set key_enc = ${own.encrypt(held.ownerKey)} where space_id = ${held.spaceId} and is_owner`,
            );
          try {
            await late(changed);
            const key = await keyOf(changed, held.jwt, held.spaceId);
            expect(key.statusCode, key.body).toBe(200);
            expect(key.json().privateKey).toBe(held.ownerKey);
            expect(other.decrypt(await storedKey(changed, held.spaceId))).toBe(held.ownerKey);
            await late(changed);
          } finally {
            await changed.close();
          }
          lines.length = 0;
          const again = await start({ SECRET: OTHER, PREVIOUS_SECRET: OWN });
          try {
            expect(lines.join('')).toMatch(
              /SECRET changed: 1 sealed values were sealed again under the new one/,
            );
            expect(other.decrypt(await storedKey(again, held.spaceId))).toBe(held.ownerKey);
          } finally {
            await again.close();
          }
          lines.length = 0;
          // Nothing left under it: the operator is told it may go.
          await (await start({ SECRET: OTHER, PREVIOUS_SECRET: OWN })).close();
          expect(lines.join('')).toMatch(/PREVIOUS_SECRET is set and nothing is sealed under it any more/);
        },
        { write: (line) => void lines.push(line) },
      );
    },
  );
});
