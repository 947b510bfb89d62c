// Baseline: a bare Fastify route that reads one row by key and inserts one ~200-byte row.
import { createHash } from 'node:crypto';
import { openDatabase } from '@convene/core';
import Fastify from 'fastify';

// postgres.js itself (drizzle's client underneath), with the pool size Convene uses; or, without
// DATABASE_URL, an embedded PGlite under BENCH_DATA_DIR, as Convene's default.
const database = await openDatabase({
  url: process.env.DATABASE_URL || undefined,
  dataDir: process.env.BENCH_DATA_DIR,
  migrate: false,
  maxConnections: 10,
});
const client = (database.db as any).$client as any;
/** One tagged-template query on either driver: postgres.js's own, or PGlite's query(). */
const sql =
  database.engine === 'postgres'
    ? client
    : async (strings: TemplateStringsArray, ...values: unknown[]) =>
        (
          await client.query(
            strings.reduce((text, part, i) => `${text}$${i}${part}`),
            values,
          )
        ).rows;
await sql`create table if not exists bench_keys (key_hash text primary key, id uuid not null)`;
await sql`create table if not exists bench_rows (id bigserial primary key, key_id uuid not null, payload text not null, created_at timestamptz not null default now())`;

const app = Fastify({ logger: false });
app.post('/bare', async (request, reply) => {
  const key = request.headers['x-key'];
  const hash = createHash('sha256').update(String(key)).digest('hex');
  const [row] = await sql`select id from bench_keys where key_hash = ${hash}`;
  if (!row) return reply.code(401).send({ error: 'unknown key' });
  const { content } = request.body as { content: string };
  await sql`insert into bench_rows (key_id, payload) values (${row.id}, ${content})`;
  return { ok: true };
});
app.post('/keys', async (request) => {
  const { keys } = request.body as { keys: string[] };
  for (const key of keys) {
    const hash = createHash('sha256').update(key).digest('hex');
    await sql`insert into bench_keys (key_hash, id) values (${hash}, gen_random_uuid()) on conflict do nothing`;
  }
  return { ok: true };
});
const address = await app.listen({ port: 0, host: '127.0.0.1' });
process.send?.({ ready: Number(new URL(address).port) });
process.on('SIGTERM', () => {
  void app.close().then(() => database.close().then(() => process.exit(0)));
});
