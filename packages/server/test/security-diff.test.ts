import { schema } from '@convene/core';
import { describe, expect, it } from 'vitest';
import { expectError, expectOk, type SpaceFixture, useServer } from './helpers';

/** Diffs are computed off the request thread, cached, and bounded in size. */
const { srv, h } = useServer();

/** About 1 MiB of short lines, none shared between tags: Myers' worst case for each pair. */
const worstContent = (tag: string) =>
  Array.from({ length: 110_000 }, (_, i) => `${tag}${(i * 7919) % 110_000}`).join('\n');

async function artifactWithVersions(space: SpaceFixture, contents: string[]): Promise<string> {
  const created = await h.post(`/hub/space/${space.spaceId}/artifact`, {
    key: space.ownerKey,
    body: { name: 'big', type: 'markdown', content: contents[0] },
  });
  expectOk(created);
  const base = `/hub/space/${space.spaceId}/artifact/${created.body.id}`;
  expectOk(await h.post(`${base}/lock`, { key: space.ownerKey }));
  for (const content of contents.slice(1)) {
    expectOk(await h.patch(base, { key: space.ownerKey, body: { content } }));
  }
  return created.body.id;
}

describe('an artifact diff', () => {
  it('leaves the server answering while four worst-case diffs run', async () => {
    const space = await h.createSpace();
    const id = await artifactWithVersions(space, ['a', 'b', 'c'].map(worstContent));
    // Each answer is noted when its status line arrives: a diff's only once it is computed.
    const order: string[] = [];
    const noted = async (label: string, path: string, headers: Record<string, string> = {}) => {
      const res = await fetch(`${srv.url}${path}`, { headers });
      order.push(label);
      return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
    };
    const diffs = [
      [1, 2],
      [2, 3],
      [1, 3],
      [3, 1],
    ].map(([from, to]) =>
      noted('diff', `/hub/space/${space.spaceId}/artifact/${id}/diff?from=${from}&to=${to}`, {
        'X-Private-Key': space.ownerKey,
      }),
    );
    // Give the diffs time to reach the server and start; an in-thread diff would now hold it.
    await new Promise((resolve) => setTimeout(resolve, 800));
    const health = await noted('health', '/api/health');
    expect(health.status).toBe(200);
    for (const res of await Promise.all(diffs)) {
      expect(res.status).toBe(200);
      expect(res.type).toMatch(/text\/x-diff/);
      expect(res.text.startsWith('--- big.md\tversion')).toBe(true);
    }
    // The health probe was answered before even the first diff was done.
    expect(order[0]).toBe('health');
  }, 120_000);

  it('is refused with 413 when the two versions hold more than 2 MiB together', async () => {
    const space = await h.createSpace();
    const id = await artifactWithVersions(space, ['small']);
    // Versions written before the limits (or restored from elsewhere) may be larger than a write
    // allows today: the diff still never compares more than 2 MiB.
    const db = srv.server.database.db;
    const big = 'x\n'.repeat(600 * 1024);
    for (const version of [2, 3]) {
      await db.insert(schema.artifactVersions).values({
        spaceId: space.spaceId,
        artifactId: id,
        version,
        content: big,
        updatedBy: space.ownerId,
        updatedAt: new Date(),
      });
    }
    const url = (from: number, to: number) =>
      `/hub/space/${space.spaceId}/artifact/${id}/diff?from=${from}&to=${to}`;
    const refused = await h.get(url(2, 3), { key: space.ownerKey });
    expectError(refused, 413);
    expect(refused.body.error).toMatch(/at most 2097152/);
    expectOk(await h.get(url(1, 2), { key: space.ownerKey }));
  });
});
