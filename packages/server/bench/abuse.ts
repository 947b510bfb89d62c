// `pnpm bench:abuse`: what the expensive answers cost the rest of the service. On PostgreSQL
// (BENCH_DATABASE_URL, else the throwaway server of scripts/test-postgres.sh), loopback only,
// every loop bounded. Reports: a worst-case artifact diff (cold and cached), /api/health latency
// while four worst-case diffs run at once, and /ask latency with 1,000 public spaces.
import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { openDatabase } from '@convene/core';
import { createPostgresTestDatabase } from '@convene/core/testing';
import { sql } from 'drizzle-orm';
import { percentile } from './http-load';
import { ensurePostgres, start, stop } from './processes';

const PUBLIC_SPACES = 1_000;
const ASK_QUERIES = 40;
const round = (n: number, d = 1) => Math.round(n * 10 ** d) / 10 ** d;

async function main() {
  const serverUrl = await ensurePostgres();
  const { url: databaseUrl, drop } = await createPostgresTestDatabase(serverUrl);
  const children: ChildProcess[] = [];
  try {
    const node = await start(
      'convene-node.ts',
      {
        DATABASE_URL: databaseUrl,
        RATE_LIMIT_MAX: '1000000000',
        LOG_LEVEL: 'error',
        SECRET: 'bench-secret-0123456789abcdef',
      },
      children,
    );
    const base = `http://127.0.0.1:${node.port}`;
    const diff = await diffFigures(base);
    const ask = await askFigures(base, databaseUrl);
    await stop(node.child);
    console.log(JSON.stringify({ diff, ask }, null, 2));
  } finally {
    for (const child of children) await stop(child);
    await drop();
  }
}

/** About 1 MiB of short lines, none shared between tags: Myers' worst case for any pair. */
const worstContent = (tag: string) =>
  Array.from({ length: 110_000 }, (_, i) => `${tag}${(i * 7919) % 110_000}`).join('\n');

async function call(method: string, url: string, key?: string, body?: unknown) {
  const started = performance.now();
  const res = await fetch(url, {
    method,
    headers: {
      ...(key ? { 'X-Private-Key': key } : {}),
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url} answered ${res.status}: ${text.slice(0, 200)}`);
  return { ms: performance.now() - started, text };
}

async function diffFigures(base: string) {
  const space = JSON.parse(
    (await call('POST', `${base}/hub/space`, undefined, { name: 'diff bench', description: 'worst case' }))
      .text,
  ) as { spaceId: string; ownerPrivateKey: string };
  const key = space.ownerPrivateKey;
  const root = `${base}/hub/space/${space.spaceId}/artifact`;
  const artifact = JSON.parse(
    (await call('POST', root, key, { name: 'big', type: 'markdown', content: worstContent('a') })).text,
  ) as { id: string };
  await call('POST', `${root}/${artifact.id}/lock`, key);
  for (const tag of ['b', 'c', 'd', 'e']) {
    await call('PATCH', `${root}/${artifact.id}`, key, { content: worstContent(tag) });
  }
  const diffUrl = (from: number, to: number) => `${root}/${artifact.id}/diff?from=${from}&to=${to}`;

  const cold = [];
  for (const [from, to] of [
    [1, 2],
    [2, 3],
  ] as const)
    cold.push((await call('GET', diffUrl(from, to), key)).ms);
  const cached = (await call('GET', diffUrl(1, 2), key)).ms;

  // Four distinct worst-case pairs at once, and /api/health every 20 ms until they are done.
  const health: number[] = [];
  let running = true;
  const probe = (async () => {
    while (running) {
      health.push((await call('GET', `${base}/api/health`)).ms);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  const started = performance.now();
  const four = await Promise.all(
    [
      [1, 3],
      [2, 4],
      [3, 5],
      [1, 5],
    ].map(([from, to]) => call('GET', diffUrl(from!, to!), key)),
  );
  const fourMs = performance.now() - started;
  running = false;
  await probe;
  return {
    versionBytes: Buffer.byteLength(worstContent('a')),
    worstCaseColdMs: cold.map((ms) => round(ms)),
    cachedRepeatMs: round(cached),
    fourConcurrent: {
      allDoneMs: round(fourMs),
      eachMs: four.map((r) => round(r.ms)),
      healthProbes: health.length,
      healthP50Ms: round(percentile(health, 50)),
      healthP99Ms: round(percentile(health, 99)),
      healthMaxMs: round(Math.max(...health)),
    },
  };
}

/** Words to write descriptions with: 2,000 made-up ones and a few every space shares. */
const VOCABULARY = Array.from({ length: 2_000 }, (_, i) => `w${i.toString(36)}${'abcdefgh'[i % 8]}`);
const text = (chars: number) => {
  const words: string[] = ['planning', 'meeting', 'release'];
  let length = 0;
  while (length < chars - 20) {
    const word = VOCABULARY[randomBytes(2).readUInt16BE() % VOCABULARY.length]!;
    words.push(word);
    length += word.length + 1;
  }
  return words.join(' ');
};

async function askFigures(base: string, databaseUrl: string) {
  // Seeded directly: 1,000 public open spaces whose description and agenda are as long as allowed.
  const database = await openDatabase({ url: databaseUrl, migrate: false, maxConnections: 2 });
  try {
    const now = new Date();
    const expires = new Date(now.getTime() + 86_400_000);
    for (let batch = 0; batch < PUBLIC_SPACES / 50; batch++) {
      const rows = Array.from({ length: 50 }, (_, i) => ({
        id: randomUUID(),
        name: `Space ${batch * 50 + i} ${text(60)}`,
        description: text(10_000),
        agenda: text(10_000),
      }));
      for (const row of rows) {
        await database.db.execute(sql`
          insert into spaces (id, name, description, agenda, privacy, ttl_seconds, created_at, expires_at)
          values (${row.id}, ${row.name}, ${row.description}, ${row.agenda}, 'public', 86400,
                  ${now.toISOString()}, ${expires.toISOString()})`);
        await database.db.execute(sql`
          insert into participants (space_id, id, name, status, is_owner, key_hash, created_at, updated_at)
          values (${row.id}, ${randomUUID()}, 'owner', 'active', true, ${randomBytes(32).toString('hex')},
                  ${now.toISOString()}, ${now.toISOString()})`);
      }
    }
    await database.db.execute(sql`analyze`);
  } finally {
    await database.close();
  }
  const queries = [
    'planning meeting',
    'release planning for the next meeting',
    VOCABULARY[7]!,
    `${VOCABULARY[100]} ${VOCABULARY[200]} ${VOCABULARY[300]}`,
    'how do I lock an artifact',
  ];
  // First query indexes the documentation; not counted.
  await call('GET', `${base}/ask?query=warmup`);
  const latencies: number[] = [];
  let results = 0;
  for (let i = 0; i < ASK_QUERIES; i++) {
    const query = queries[i % queries.length]!;
    const { ms, text: body } = await call('POST', `${base}/ask`, undefined, { query });
    latencies.push(ms);
    results += (JSON.parse(body) as { results: unknown[] }).results.length;
  }
  return {
    publicSpaces: PUBLIC_SPACES,
    queries: ASK_QUERIES,
    averageResults: round(results / ASK_QUERIES),
    p50Ms: round(percentile(latencies, 50)),
    p99Ms: round(percentile(latencies, 99)),
    maxMs: round(Math.max(...latencies)),
  };
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
