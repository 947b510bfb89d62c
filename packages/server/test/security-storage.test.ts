import { limits } from '@convene/contract';
import { FakeClock, rowsOf } from '@convene/core';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { expectError, expectOk, type SpaceFixture, useServer } from './helpers';

/** Storage is bounded: per space, and over time (an invitation is not capped). */
const clock = new FakeClock('2030-01-01T00:00:00.000Z');
const { srv, h } = useServer({
  clock,
  config: { spaceRetentionSeconds: 3_600, policySweepIntervalMs: 50 },
});

const query = async <T>(statement: ReturnType<typeof sql>) =>
  rowsOf<T>(await srv.server.database.db.execute(statement));

async function artifactBytes(spaceId: string): Promise<number> {
  const [row] = await query<{ n: string | number }>(
    sql`select artifact_bytes as n from spaces where id = ${spaceId}`,
  );
  return Number(row?.n);
}

describe('an invitation', () => {
  it('is not capped: one invitation may admit a full space (decisions.md bounds the space, not the invitation)', async () => {
    const space = await h.createSpace();
    const invitation = await h.invite(space);
    const join = (name: string) =>
      h.post(`/hub/space/${space.spaceId}/join`, { key: invitation, body: { name } });
    expectOk(await join('first'));
    // As if it had admitted all but one of a full space already (the joins are counted, as a record).
    const [counted] = await query<{ joins: number }>(
      sql`update invitations set joins = ${limits.participantsPerSpace - 2} where space_id = ${space.spaceId} returning joins`,
    );
    expect(counted?.joins).toBe(limits.participantsPerSpace - 2);
    expectOk(await join('second'));
    const [after] = await query<{ joins: number }>(
      sql`select joins from invitations where space_id = ${space.spaceId}`,
    );
    expect(after?.joins).toBe(limits.participantsPerSpace - 1);
    const view = await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
    expect(view.body.participants).toHaveLength(3);
  });
});

describe("a space's artifact storage", () => {
  async function lockedArtifact(space: SpaceFixture, content: string) {
    const created = await h.post(`/hub/space/${space.spaceId}/artifact`, {
      key: space.ownerKey,
      body: { name: 'doc', type: 'markdown', content },
    });
    expectOk(created);
    const base = `/hub/space/${space.spaceId}/artifact/${created.body.id}`;
    expectOk(await h.post(`${base}/lock`, { key: space.ownerKey }));
    return base;
  }

  it('counts every version, in UTF-8 bytes', async () => {
    const space = await h.createSpace();
    const base = await lockedArtifact(space, 'abc');
    expect(await artifactBytes(space.spaceId)).toBe(3);
    expectOk(await h.patch(base, { key: space.ownerKey, body: { content: 'héllo' } }));
    expectOk(await h.post(`${base}/versions/1/restore`, { key: space.ownerKey }));
    expect(await artifactBytes(space.spaceId)).toBe(3 + 6 + 3);
  });

  it('refuses a write or a new artifact past the bound with 409, changing nothing', async () => {
    const space = await h.createSpace();
    const base = await lockedArtifact(space, 'v1');
    // As if the space had already stored almost all it may.
    const nearly = limits.artifactBytesPerSpace - 1;
    await srv.server.database.db.execute(
      sql`update spaces set artifact_bytes = ${nearly} where id = ${space.spaceId}`,
    );
    const write = await h.patch(base, { key: space.ownerKey, body: { content: 'xx' } });
    expectError(write, 409);
    expect(write.body.error).toMatch(/stores at most/);
    expectError(await h.post(`${base}/versions/1/restore`, { key: space.ownerKey }), 409);
    expectError(
      await h.post(`/hub/space/${space.spaceId}/artifact`, {
        key: space.ownerKey,
        body: { name: 'more', type: 'markdown', content: 'yy' },
      }),
      409,
    );
    const after = await h.get(base, { key: space.ownerKey });
    expect(after.body).toMatchObject({ version: 1, content: 'v1' });
    expect(await artifactBytes(space.spaceId)).toBe(nearly);
    // What still fits is written.
    expectOk(await h.patch(base, { key: space.ownerKey, body: { content: 'x' } }));
  });
});

describe('closed and expired spaces', () => {
  it('are deleted with all they hold once their retention is over; open ones stay', async () => {
    const filled = async (options: Record<string, unknown>) => {
      const space = await h.createSpace(options);
      const p = await h.joinActive(space);
      // A budget, a mention (an inbox entry) and a webhook (that never fires here) are the space's too.
      expectOk(
        await h.put(`/hub/space/${space.spaceId}`, {
          key: space.ownerKey,
          body: { maxMessagesPerMinute: 100 },
        }),
      );
      expectOk(
        await h.post(`/hub/space/${space.spaceId}/messages`, {
          key: p.key,
          body: { content: 'hi', mentions: [space.ownerId] },
        }),
      );
      expectOk(
        await h.post(`/hub/space/${space.spaceId}/webhooks`, {
          key: p.key,
          body: { url: 'https://1.1.1.1/hook', events: ['artifact-locked'] },
        }),
        201,
      );
      expectOk(
        await h.post(`/hub/space/${space.spaceId}/artifact`, {
          key: p.key,
          body: { name: 'a', type: 'markdown', content: 'text' },
        }),
      );
      return space;
    };
    const expiring = await filled({ ttl: 60 });
    const closed = await filled({});
    const open = await filled({ ttl: 30 * 86_400 });
    expectOk(await h.delete(`/hub/space/${closed.spaceId}`, { key: closed.ownerKey }));
    const tables = [
      'inbox_entries',
      'send_budgets',
      'webhooks',
      'participants',
      'invitations',
      'messages',
      'space_events',
      'artifacts',
      'artifact_versions',
    ];
    const rowsOfSpace = async (spaceId: string) => {
      let n = 0;
      for (const table of ['spaces', ...tables]) {
        const column = table === 'spaces' ? 'id' : 'space_id';
        const [row] = await query<{ n: string | number }>(
          sql`select count(*) as n from ${sql.identifier(table)} where ${sql.identifier(column)} = ${spaceId}`,
        );
        n += Number(row?.n);
      }
      return n;
    };
    // Within the retention period both are kept (the dashboard still shows them).
    clock.advance(60_000 + 3_000_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await rowsOfSpace(expiring.spaceId)).toBeGreaterThan(0);
    expect(await rowsOfSpace(closed.spaceId)).toBeGreaterThan(0);
    clock.advance(3_600_000);
    const deadline = Date.now() + 15_000;
    while (
      ((await rowsOfSpace(expiring.spaceId)) > 0 || (await rowsOfSpace(closed.spaceId)) > 0) &&
      Date.now() < deadline
    )
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await rowsOfSpace(expiring.spaceId)).toBe(0);
    expect(await rowsOfSpace(closed.spaceId)).toBe(0);
    expect(await rowsOfSpace(open.spaceId)).toBeGreaterThan(5);
    expectOk(await h.get(`/hub/space/${open.spaceId}`, { key: open.ownerKey }));
    expectError(await h.get(`/hub/space/${closed.spaceId}`, { key: closed.ownerKey }), 404);
  }, 60_000);
});
