import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock, unifiedDiff } from '@convene/core';
import { applyPatch } from 'diff';
import { describe, expect, it } from 'vitest';
import {
  type ApiResponse,
  expectError,
  expectKeyChecks,
  expectOk,
  type ParticipantFixture,
  type SpaceFixture,
  useServer,
} from './helpers';

// Version history, diffs and restores, checked byte for byte with unicode and CRLF content.
const clock = new FakeClock('2030-01-01T00:00:00.000Z');

const { srv, h } = useServer({ clock });

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
const at = (offsetMs = 0) => new Date(clock.now().getTime() + offsetMs).toISOString();
const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

/** Contents that trip up naive text handling: CRLF, combining marks, emoji (ZWJ sequences too), no final newline. */
const CONTENTS = [
  '# Title\r\nCafé\r\ne\u0301 (e + combining acute)\r\n😀 emoji\r\nno newline at the end',
  '# Title\r\nCafe\u0301\r\ne\u0301 (e + combining acute)\r\n😀😀 emoji\r\n👩‍👩‍👧 family\r\nno newline at the end\n',
  '',
  'mixed\nendings\r\nhere\rand\n\n\ttabs\u00a0nbsp\u200bzwsp\n\ud835\udc00 math bold A\n',
];

interface Room {
  space: SpaceFixture;
  alice: ParticipantFixture;
  bob: ParticipantFixture;
}

async function room(): Promise<Room> {
  const space = await h.createSpace();
  return {
    space,
    alice: await h.joinActive(space, { name: 'Alice' }),
    bob: await h.joinActive(space, { name: 'Bob' }),
  };
}

const artifactPath = (space: SpaceFixture, id: string) => `/hub/space/${space.spaceId}/artifact/${id}`;

async function create(space: SpaceFixture, key: string, content: string, name = 'Notes') {
  const res = await h.post(`/hub/space/${space.spaceId}/artifact`, {
    key,
    body: { name, type: 'markdown', content },
  });
  expectOk(res);
  return res.body;
}

async function lock(space: SpaceFixture, id: string, key: string) {
  expectOk(await h.post(`${artifactPath(space, id)}/lock`, { key }));
}

async function write(space: SpaceFixture, id: string, key: string, content: string) {
  const res = await h.patch(artifactPath(space, id), { key, body: { content } });
  expectOk(res);
  return res.body;
}

/** Raw bytes of a response body, so nothing is normalised on the way. */
async function rawGet(path: string, key: string) {
  const res = await fetch(`${srv.url}${path}`, { headers: { 'X-Private-Key': key } });
  return { res, body: Buffer.from(await res.arrayBuffer()) };
}

const diffOf = (space: SpaceFixture, id: string, from: number | string, to: number | string, key: string) =>
  rawGet(`${artifactPath(space, id)}/diff?from=${from}&to=${to}`, key);

/** Applies a unified diff with GNU patch when the machine has it (an implementation other than ours). */
function gnuPatch(original: string, diff: string): string | undefined {
  if (!existsSync('/usr/bin/patch')) return undefined;
  const dir = mkdtempSync(join(tmpdir(), 'convene-patch-'));
  try {
    writeFileSync(join(dir, 'file'), original, 'utf8');
    execFileSync('/usr/bin/patch', ['-s', '-o', join(dir, 'out'), join(dir, 'file')], { input: diff });
    return readFileSync(join(dir, 'out'), 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * An artifact whose history holds CONTENTS as versions 1..4: Alice creates and writes,
 * Bob takes over after she unlocks, so authors differ across versions.
 */
async function historyOf(r: Room) {
  const times: string[] = [];
  const artifact = await create(r.space, r.alice.key, CONTENTS[0]!);
  times.push(at());
  await lock(r.space, artifact.id, r.alice.key);
  clock.advance(1000);
  await write(r.space, artifact.id, r.alice.key, CONTENTS[1]!);
  times.push(at());
  expectOk(await h.delete(`${artifactPath(r.space, artifact.id)}/lock`, { key: r.alice.key }));
  await lock(r.space, artifact.id, r.bob.key);
  clock.advance(1000);
  await write(r.space, artifact.id, r.bob.key, CONTENTS[2]!);
  times.push(at());
  clock.advance(1000);
  await write(r.space, artifact.id, r.bob.key, CONTENTS[3]!);
  times.push(at());
  const authors = [r.alice, r.alice, r.bob, r.bob].map((p) => p.participantId);
  return { artifact, times, authors };
}

describe('listArtifactVersions', () => {
  it('lists every version newest first with author, time and UTF-8 size; muted included', async () => {
    const r = await room();
    const { artifact, times, authors } = await historyOf(r);
    const expected = CONTENTS.map((content, i) => ({
      version: i + 1,
      updatedBy: authors[i],
      updatedAt: times[i],
      size: bytes(content),
    })).reverse();
    expectOk(
      await h.post(`/hub/space/${r.space.spaceId}/participants/${r.alice.participantId}/mute`, {
        key: r.space.ownerKey,
      }),
    );
    for (const key of [r.alice.key, r.bob.key, r.space.ownerKey]) {
      const res = await h.get(`${artifactPath(r.space, artifact.id)}/versions`, { key });
      expectOk(res);
      expect(res.body).toEqual({ versions: expected });
    }
    // Sizes count bytes, not characters: the emoji and combining marks make them differ.
    expect(bytes(CONTENTS[1]!)).toBeGreaterThan(CONTENTS[1]!.length);
  });

  it('answers 404 for unknown artifacts, 401 for closed spaces and wrong keys', async () => {
    const r = await room();
    const artifact = await create(r.space, r.alice.key, 'x');
    expectError(await h.get(`${artifactPath(r.space, UNKNOWN_ID)}/versions`, { key: r.alice.key }), 404);
    expectError(await h.get(`${artifactPath(r.space, 'v1')}/versions`, { key: r.alice.key }), 404);
    await expectKeyChecks(h, {
      method: 'GET',
      path: `${artifactPath(r.space, artifact.id)}/versions`,
      wrongKeys: { invitation: await h.invite(r.space), 'other space': (await h.createSpace()).ownerKey },
    });
    expectOk(await h.delete(`/hub/space/${r.space.spaceId}`, { key: r.space.ownerKey }));
    expectError(await h.get(`${artifactPath(r.space, artifact.id)}/versions`, { key: r.alice.key }), 401);
  });
});

describe('getArtifactVersion', () => {
  it('answers each version as it was, byte for byte, without lock fields', async () => {
    const r = await room();
    const { artifact, times, authors } = await historyOf(r);
    // Bob still holds the lock: the current view shows it, old versions do not.
    for (const [i, content] of CONTENTS.entries()) {
      const res = await h.get(`${artifactPath(r.space, artifact.id)}/versions/${i + 1}`, {
        key: r.alice.key,
      });
      expectOk(res);
      expect(res.body).toEqual({
        id: artifact.id,
        spaceId: r.space.spaceId,
        name: 'Notes',
        type: 'markdown',
        content,
        version: i + 1,
        createdBy: r.alice.participantId,
        updatedBy: authors[i],
        createdAt: times[0],
        updatedAt: times[i],
      });
      const raw = await rawGet(`${artifactPath(r.space, artifact.id)}/versions/${i + 1}`, r.alice.key);
      expect(Buffer.from(JSON.parse(raw.body.toString('utf8')).content, 'utf8')).toEqual(
        Buffer.from(content, 'utf8'),
      );
    }
    const current = await h.get(artifactPath(r.space, artifact.id), { key: r.alice.key });
    expect(current.body.lockedBy).toBe(r.bob.participantId);
    const latest = await h.get(`${artifactPath(r.space, artifact.id)}/versions/4`, { key: r.alice.key });
    const { lockedBy: _l, lockedAt: _a, lockExpiresAt: _e, ...unlocked } = current.body;
    expect(latest.body).toEqual(unlocked);
  });

  it.each(['0', '2', '-1', '1.5', 'abc', '01', '99999999999'])('answers 404 for version %s', async (v) => {
    const r = await room();
    const artifact = await create(r.space, r.alice.key, 'x');
    expectError(
      await h.get(`${artifactPath(r.space, artifact.id)}/versions/${v}`, { key: r.alice.key }),
      404,
    );
  });

  it('answers 404 for an unknown artifact and 401 for wrong keys', async () => {
    const r = await room();
    const artifact = await create(r.space, r.alice.key, 'x');
    expectError(await h.get(`${artifactPath(r.space, UNKNOWN_ID)}/versions/1`, { key: r.alice.key }), 404);
    await expectKeyChecks(h, {
      method: 'GET',
      path: `${artifactPath(r.space, artifact.id)}/versions/1`,
      wrongKeys: { invitation: await h.invite(r.space), 'other space': (await h.createSpace()).ownerKey },
    });
  });
});

describe('diffArtifactVersions', () => {
  it('serves a unified diff in the diff -u format', async () => {
    const r = await room();
    const artifact = await create(r.space, r.alice.key, 'a\nb\nc\n', 'Plan');
    await lock(r.space, artifact.id, r.alice.key);
    await write(r.space, artifact.id, r.alice.key, 'a\nB\nc\n');
    const { res, body } = await diffOf(r.space, artifact.id, 1, 2, r.bob.key);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/x-diff; charset=utf-8');
    expect(res.headers.get('api-version')).toBe('1');
    expect(body.toString('utf8')).toBe(
      '--- Plan.md\tversion 1\n+++ Plan.md\tversion 2\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n',
    );
    // Equal contents: an empty body, as diff -u gives.
    const same = await diffOf(r.space, artifact.id, 2, 2, r.bob.key);
    expect(same.res.status).toBe(200);
    expect(same.res.headers.get('content-type')).toBe('text/x-diff; charset=utf-8');
    expect(same.body.length).toBe(0);
  });

  it('turns every version into every other exactly, in both directions, unicode and CRLF included', async () => {
    const r = await room();
    const { artifact } = await historyOf(r);
    for (let from = 1; from <= CONTENTS.length; from++) {
      for (let to = 1; to <= CONTENTS.length; to++) {
        const { res, body } = await diffOf(r.space, artifact.id, from, to, r.alice.key);
        expect(res.status).toBe(200);
        const diff = body.toString('utf8');
        if (from === to) {
          expect(diff).toBe('');
          continue;
        }
        expect(applyPatch(CONTENTS[from - 1]!, diff), `${from} -> ${to}`).toBe(CONTENTS[to - 1]);
        const patched = gnuPatch(CONTENTS[from - 1]!, diff);
        if (patched !== undefined) expect(patched, `GNU patch ${from} -> ${to}`).toBe(CONTENTS[to - 1]);
      }
    }
  });

  it('falls back to a replace-everything patch that still applies exactly', () => {
    const from = { version: 1, content: CONTENTS[0]! };
    const to = { version: 2, content: CONTENTS[1]! };
    const minimal = unifiedDiff('x.md', from, to);
    const fallback = unifiedDiff('x.md', from, to, { maxEditLength: 0 });
    expect(fallback).not.toBe(minimal);
    expect(fallback).toContain('@@ -1,5 +1,6 @@');
    for (const [a, b] of [
      [from, to],
      [to, from],
      [{ version: 3, content: '' }, to],
      [from, { version: 3, content: '' }],
    ] as const) {
      const diff = unifiedDiff('x.md', a, b, { maxEditLength: 0 });
      expect(applyPatch(a.content, diff)).toBe(b.content);
      const patched = gnuPatch(a.content, diff);
      if (patched !== undefined) expect(patched).toBe(b.content);
    }
  });

  it.each([
    ['from missing', '?to=1'],
    ['to missing', '?from=1'],
    ['from not a number', '?from=abc&to=1'],
    ['to fractional', '?from=1&to=1.5'],
    ['from empty', '?from=&to=1'],
  ])('answers 400 when %s', async (_label, query) => {
    const r = await room();
    const artifact = await create(r.space, r.alice.key, 'x');
    expectError(await h.get(`${artifactPath(r.space, artifact.id)}/diff${query}`, { key: r.alice.key }), 400);
  });

  it('answers 404 when either version or the artifact is missing', async () => {
    const r = await room();
    const artifact = await create(r.space, r.alice.key, 'x');
    for (const query of ['?from=1&to=2', '?from=2&to=1', '?from=0&to=1', '?from=-1&to=1']) {
      expectError(
        await h.get(`${artifactPath(r.space, artifact.id)}/diff${query}`, { key: r.alice.key }),
        404,
      );
    }
    expectError(
      await h.get(`${artifactPath(r.space, UNKNOWN_ID)}/diff?from=1&to=1`, { key: r.alice.key }),
      404,
    );
    expectError(await h.get(`${artifactPath(r.space, 'x')}/diff?from=1&to=1`, { key: r.alice.key }), 404);
  });

  it('answers 401 for missing, unknown and wrong keys, and on a closed space', async () => {
    const r = await room();
    const artifact = await create(r.space, r.alice.key, 'x');
    const path = `${artifactPath(r.space, artifact.id)}/diff?from=1&to=1`;
    await expectKeyChecks(h, {
      method: 'GET',
      path,
      wrongKeys: { invitation: await h.invite(r.space), 'other space': (await h.createSpace()).ownerKey },
    });
    expectOk(await h.delete(`/hub/space/${r.space.spaceId}`, { key: r.space.ownerKey }));
    expectError(await h.get(path, { key: r.alice.key }), 401);
  });
});

describe('restoreArtifactVersion', () => {
  const restore = (space: SpaceFixture, id: string, version: number | string, key: string) =>
    h.post(`${artifactPath(space, id)}/versions/${version}/restore`, { key });

  it('writes the old content as a new version, byte for byte, refreshing the lock', async () => {
    const r = await room();
    const { artifact } = await historyOf(r);
    clock.advance(5000);
    const res = await restore(r.space, artifact.id, 1, r.bob.key);
    expectOk(res);
    expect(res.body).toMatchObject({
      content: CONTENTS[0],
      version: 5,
      updatedBy: r.bob.participantId,
      updatedAt: at(),
      lockedBy: r.bob.participantId,
      lockExpiresAt: at(600_000),
    });
    const { res: dl, body } = await rawGet(`${artifactPath(r.space, artifact.id)}/download`, r.alice.key);
    expect(dl.status).toBe(200);
    expect(body).toEqual(Buffer.from(CONTENTS[0]!, 'utf8'));
    const diff = await diffOf(r.space, artifact.id, 1, 5, r.alice.key);
    expect(diff.res.status).toBe(200);
    expect(diff.body.length).toBe(0);
    const versions = await h.get(`${artifactPath(r.space, artifact.id)}/versions`, { key: r.alice.key });
    expect(versions.body.versions.map((v: { version: number }) => v.version)).toEqual([5, 4, 3, 2, 1]);
    expect(versions.body.versions[0].size).toBe(bytes(CONTENTS[0]!));
  });

  it('restores an empty version too, and lets a muted holder restore', async () => {
    const r = await room();
    const { artifact } = await historyOf(r);
    expectOk(
      await h.post(`/hub/space/${r.space.spaceId}/participants/${r.bob.participantId}/mute`, {
        key: r.space.ownerKey,
      }),
    );
    const res = await restore(r.space, artifact.id, 3, r.bob.key);
    expectOk(res);
    expect(res.body).toMatchObject({ content: '', version: 5 });
  });

  it('answers 423 naming the holder to others, without a holder when nobody holds it', async () => {
    const r = await room();
    const { artifact } = await historyOf(r);
    const expectLocked = (res: ApiResponse) => {
      expectError(res, 423);
      expect(res.body.lockedBy).toBe(r.bob.participantId);
      expect(typeof res.body.lockExpiresAt).toBe('string');
    };
    expectLocked(await restore(r.space, artifact.id, 1, r.alice.key));
    expectLocked(await restore(r.space, artifact.id, 1, r.space.ownerKey));
    expectOk(await h.delete(`${artifactPath(r.space, artifact.id)}/lock`, { key: r.bob.key }));
    const free = await restore(r.space, artifact.id, 1, r.bob.key);
    expectError(free, 423);
    expect(free.body).not.toHaveProperty('lockedBy');
    const versions = await h.get(`${artifactPath(r.space, artifact.id)}/versions`, { key: r.alice.key });
    expect(versions.body.versions).toHaveLength(4);
  });

  it('answers 404 for a missing version or artifact, even to the holder', async () => {
    const r = await room();
    const artifact = await create(r.space, r.alice.key, 'x');
    await lock(r.space, artifact.id, r.alice.key);
    for (const v of ['2', '0', 'abc']) expectError(await restore(r.space, artifact.id, v, r.alice.key), 404);
    expectError(await restore(r.space, UNKNOWN_ID, 1, r.alice.key), 404);
    expectError(await restore(r.space, 'nope', 1, r.alice.key), 404);
  });

  it('answers 401 for missing, unknown and wrong keys, and on a closed space', async () => {
    const r = await room();
    const artifact = await create(r.space, r.alice.key, 'x');
    await lock(r.space, artifact.id, r.alice.key);
    await expectKeyChecks(h, {
      method: 'POST',
      path: `${artifactPath(r.space, artifact.id)}/versions/1/restore`,
      wrongKeys: { invitation: await h.invite(r.space), 'other space': (await h.createSpace()).ownerKey },
    });
    expectOk(await h.delete(`/hub/space/${r.space.spaceId}`, { key: r.space.ownerKey }));
    expectError(await restore(r.space, artifact.id, 1, r.alice.key), 401);
  });
});
