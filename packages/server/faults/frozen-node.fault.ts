import {
  IDLE_IN_TRANSACTION_TIMEOUT_MS,
  openDatabase,
  rowsOf,
  STALLED_SESSION_SWEEP_MS,
} from '@convene/core';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { Harness } from '../test/helpers/factories';
import { useDeployment } from './support/deployment';
import { report } from './support/figures';
import { call, sleep, waitFor } from './support/http';

type Deployment = ReturnType<typeof useDeployment>;

/** Two nodes on one database, a space made on the second, a send to it on either, and a session of the test's own. */
async function twoNodes(deployment: Deployment, name: string) {
  const frozen = await deployment.start();
  const other = await deployment.start();
  const space = await new Harness(other.url).createSpace({ name });
  const send = (node: string, content: string) =>
    call('POST', `${node}/hub/space/${space.spaceId}/messages`, { key: space.ownerKey, body: { content } });
  expect((await send(other.url, 'before')).status).toBe(200);
  const admin = await openDatabase({ url: deployment.databaseUrl, migrate: false });
  const created = () =>
    call('POST', `${frozen.url}/hub/space/${space.spaceId}/artifact`, {
      key: space.ownerKey,
      body: { name: 'never', type: 'markdown', content: 'x' },
    });
  return { frozen, other, space, send, admin, created };
}

/** `statement` run by the test's own session in a transaction it keeps open until `release`d. */
async function holdOpen(admin: Awaited<ReturnType<typeof openDatabase>>, statement: ReturnType<typeof sql>) {
  let release!: () => void;
  let locked!: () => void;
  const holding = new Promise<void>((resolve) => (locked = resolve));
  const holder = admin.db.transaction(async (tx) => {
    await tx.execute(statement);
    locked();
    await new Promise<void>((resolve) => (release = resolve));
  });
  await holding;
  return async () => {
    release();
    await holder;
  };
}

/**
 * Woken, the frozen node's write was rolled back (its answer a failure, never a 200), and the
 * node serves again on a new session.
 */
async function rolledBackAndServing(
  { other, frozen, space, send, admin }: Awaited<ReturnType<typeof twoNodes>>,
  created: ReturnType<typeof call>,
) {
  const answer = await created;
  expect(answer.status).not.toBe(200);
  const artifacts = await call('GET', `${other.url}/hub/space/${space.spaceId}/artifact`, {
    key: space.ownerKey,
  });
  expect(artifacts.body.artifacts).toEqual([]);
  let after = await send(frozen.url, 'after');
  for (let i = 0; after.status !== 200 && i < 10; i++) {
    await sleep(500);
    after = await send(frozen.url, 'after');
  }
  expect(after.status).toBe(200);
  await admin.close();
}

/**
 * A node frozen (SIGSTOP, as a paused VM or a stopped container) in the middle of a transaction
 * that holds a space's row: the other node's sends to that space wait for the row, and without a
 * bound they would wait for as long as the frozen node stays frozen. PostgreSQL ends the frozen
 * node's session once it has sat idle in its transaction for IDLE_IN_TRANSACTION_TIMEOUT_MS,
 * rolling it back; the other node's send then goes through, and the frozen node, woken, goes on.
 */
describe('a node frozen in the middle of a transaction', () => {
  const deployment = useDeployment();

  it('holds the other node’s writes to its space for the idle-in-transaction timeout, not until it wakes', async () => {
    const nodes = await twoNodes(deployment, 'Held row');
    const { frozen, other, send, admin } = nodes;
    // The test's own session holds the space's row, so that the frozen node's createArtifact waits
    // for it inside its transaction; it is frozen there, and takes the row once it is let go.
    const release = await holdOpen(
      admin,
      sql`select 1 from spaces where id = ${nodes.space.spaceId} for update`,
    );
    const created = nodes.created();
    // The frozen node's session waits for the row.
    await waitFor(
      async () =>
        rowsOf<{ n: number | string }>(
          await admin.db.execute(sql`
            select count(*) as n from pg_stat_activity
            where wait_event_type = 'Lock' and application_name = 'convene'`),
        ).map((r) => Number(r.n))[0]! > 0,
      10_000,
      'the createArtifact to wait inside its transaction',
    );
    process.kill(frozen.pid, 'SIGSTOP');
    try {
      await release();
      // Its session now sits idle in its transaction, the space's row still locked.
      const started = Date.now();
      const held = await send(other.url, 'while the other node is frozen');
      const heldMs = Date.now() - started;
      report('frozen node', { heldMs, status: held.status, timeoutMs: IDLE_IN_TRANSACTION_TIMEOUT_MS });
      expect(held.status).toBe(200);
      expect(heldMs).toBeLessThan(IDLE_IN_TRANSACTION_TIMEOUT_MS + 5_000);
      // It waited for the row: the timeout, not chance, let it through.
      expect(heldMs).toBeGreaterThan(IDLE_IN_TRANSACTION_TIMEOUT_MS - 6_000);
    } finally {
      process.kill(frozen.pid, 'SIGCONT');
    }
    await rolledBackAndServing(nodes, created);
  });
});

/**
 * A node frozen in the middle of a statement of its transaction: its session is not idle but
 * `active`, waiting to read the rest of the statement from its node, which PostgreSQL 15 never
 * times out. Every node looks for such sessions every STALLED_SESSION_SWEEP_MS and ends those that
 * have waited IDLE_IN_TRANSACTION_TIMEOUT_MS (core's endStalledSessions).
 */
describe('a node frozen in the middle of a statement', () => {
  const deployment = useDeployment();

  it('holds the other node’s writes to its space for the same bound, plus one sweep at most', async () => {
    // Fresh nodes: no statement is prepared on their connections yet, so postgres.js sends one with
    // parameters as Parse/Describe/Flush, and its Bind/Execute/Sync once the description is back. A
    // node stopped in between leaves its session `active`, reading from its client (ClientRead):
    // not idle, so idle_in_transaction_session_timeout never ends it (trial 51, finding 3).
    const nodes = await twoNodes(deployment, 'Held mid-statement');
    const { frozen, other, send, admin } = nodes;
    // The test's own session locks the artifacts table, so that the frozen node's createArtifact,
    // the space's row locked, waits in the Parse of its count of the space's artifacts; it is
    // frozen there, and its Parse completes once the table is let go.
    const counting = (condition: ReturnType<typeof sql>) => async () =>
      rowsOf<{ n: number | string }>(
        await admin.db.execute(sql`
          select count(*) as n from pg_stat_activity
          where application_name = 'convene' and query like 'select count(*) from "artifacts"%'
            and ${condition}`),
      ).map((r) => Number(r.n))[0]! > 0;
    const release = await holdOpen(admin, sql`lock table artifacts in access exclusive mode`);
    const created = nodes.created();
    await waitFor(
      counting(sql`wait_event_type = 'Lock'`),
      10_000,
      'the count of artifacts to wait for the table',
    );
    process.kill(frozen.pid, 'SIGSTOP');
    // Whatever happens, the node wakes: without a bound, the send below waits until then.
    const wake = setTimeout(
      () => process.kill(frozen.pid, 'SIGCONT'),
      IDLE_IN_TRANSACTION_TIMEOUT_MS + 20_000,
    );
    try {
      await release();
      await waitFor(
        counting(sql`state = 'active' and wait_event = 'ClientRead'`),
        5_000,
        'the frozen session to wait on its node (active, ClientRead)',
      );
      const started = Date.now();
      const held = await send(other.url, 'while the other node is frozen mid-statement');
      const heldMs = Date.now() - started;
      report('frozen node, mid-statement', {
        heldMs,
        status: held.status,
        timeoutMs: IDLE_IN_TRANSACTION_TIMEOUT_MS,
        sweepMs: STALLED_SESSION_SWEEP_MS,
      });
      expect(held.status).toBe(200);
      expect(heldMs).toBeLessThan(IDLE_IN_TRANSACTION_TIMEOUT_MS + STALLED_SESSION_SWEEP_MS + 2_000);
      // It waited for the row: the bound, not chance, let it through.
      expect(heldMs).toBeGreaterThan(IDLE_IN_TRANSACTION_TIMEOUT_MS - 3_000);
    } finally {
      clearTimeout(wake);
      process.kill(frozen.pid, 'SIGCONT');
    }
    await rolledBackAndServing(nodes, created);
  });
});
