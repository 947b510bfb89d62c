import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock, unifiedDiff } from '@convene/core';
import { AuthenticationError, LockedError, NotFoundError, type SpaceClient } from '@convene/sdk';
import { applyPatch } from 'diff';
import { describe, expect, it } from 'vitest';
import {
  expectAnswer,
  expectError,
  expectKeyChecks,
  idOf,
  type OwnedSpace,
  sdkError,
  useServer,
} from './helpers';

// Version history, diffs and restores, checked byte for byte with unicode and CRLF content: read
// through the SDK, with raw HTTP for the exact bytes and headers, ill-formed versions and queries,
// and the key checks.
const clock = new FakeClock('2030-01-01T00:00:00.000Z');

const { srv, h, sdk } = useServer({ clock });

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
  space: OwnedSpace;
  alice: SpaceClient;
  bob: SpaceClient;
}

async function room(): Promise<Room> {
  const space = await sdk.createSpace();
  return {
    space,
    alice: await sdk.joinActive(space.owner, { name: 'Alice' }),
    bob: await sdk.joinActive(space.owner, { name: 'Bob' }),
  };
}

const artifactPath = (space: { spaceId: string }, id: string) => `/hub/space/${space.spaceId}/artifact/${id}`;

async function create(client: SpaceClient, content: string, name = 'Notes') {
  const res = await client.artifacts.create({ name, content }).withResponse();
  expectAnswer(res);
  return res.data;
}

async function lock(client: SpaceClient, id: string) {
  expectAnswer(await client.artifacts.lock(id).withResponse());
}

async function write(client: SpaceClient, id: string, content: string) {
  const res = await client.artifacts.write(id, content).withResponse();
  expectAnswer(res);
  return res.data;
}

/** Raw bytes of a response body, so nothing is normalised on the way. */
async function rawGet(path: string, key: string) {
  const res = await fetch(`${srv.url}${path}`, { headers: { 'X-Private-Key': key } });
  return { res, body: Buffer.from(await res.arrayBuffer()) };
}

const diffOf = (space: { spaceId: string }, id: string, from: number, to: number, key: string) =>
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
  const artifact = await create(r.alice, CONTENTS[0]!);
  times.push(at());
  await lock(r.alice, artifact.id);
  clock.advance(1000);
  await write(r.alice, artifact.id, CONTENTS[1]!);
  times.push(at());
  expectAnswer(await r.alice.artifacts.unlock(artifact.id).withResponse());
  await lock(r.bob, artifact.id);
  clock.advance(1000);
  await write(r.bob, artifact.id, CONTENTS[2]!);
  times.push(at());
  clock.advance(1000);
  await write(r.bob, artifact.id, CONTENTS[3]!);
  times.push(at());
  const authors = [r.alice, r.alice, r.bob, r.bob].map(idOf);
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
    expectAnswer(await r.space.owner.participants.mute(idOf(r.alice)).withResponse());
    for (const client of [r.alice, r.bob, r.space.owner]) {
      const res = await client.artifacts.history(artifact.id).withResponse();
      expectAnswer(res);
      expect(res.data).toEqual({ versions: expected });
    }
    // Sizes count bytes, not characters: the emoji and combining marks make them differ.
    expect(bytes(CONTENTS[1]!)).toBeGreaterThan(CONTENTS[1]!.length);
  });

  it('answers 404 for unknown artifacts, 401 for closed spaces and wrong keys', async () => {
    const r = await room();
    const artifact = await create(r.alice, 'x');
    await sdkError(r.alice.artifacts.history(UNKNOWN_ID), NotFoundError);
    await sdkError(r.alice.artifacts.history('v1'), NotFoundError);
    await expectKeyChecks(h, {
      method: 'GET',
      path: `${artifactPath(r.space, artifact.id)}/versions`,
      wrongKeys: { invitation: await h.invite(r.space), 'other space': (await h.createSpace()).ownerKey },
    });
    expectAnswer(await r.space.owner.close().withResponse());
    await sdkError(r.alice.artifacts.history(artifact.id), AuthenticationError);
  });
});

describe('getArtifactVersion', () => {
  it('answers each version as it was, byte for byte, without lock fields', async () => {
    const r = await room();
    const { artifact, times, authors } = await historyOf(r);
    // Bob still holds the lock: the current view shows it, old versions do not.
    for (const [i, content] of CONTENTS.entries()) {
      const res = await r.alice.artifacts.version(artifact.id, i + 1).withResponse();
      expectAnswer(res);
      expect(res.data).toEqual({
        id: artifact.id,
        spaceId: r.space.spaceId,
        name: 'Notes',
        type: 'markdown',
        content,
        version: i + 1,
        createdBy: idOf(r.alice),
        updatedBy: authors[i],
        createdAt: times[0],
        updatedAt: times[i],
      });
      const raw = await rawGet(`${artifactPath(r.space, artifact.id)}/versions/${i + 1}`, r.alice.key);
      expect(Buffer.from(JSON.parse(raw.body.toString('utf8')).content, 'utf8')).toEqual(
        Buffer.from(content, 'utf8'),
      );
    }
    const current = await r.alice.artifacts.get(artifact.id);
    expect(current.lockedBy).toBe(idOf(r.bob));
    const latest = await r.alice.artifacts.version(artifact.id, 4);
    const { lockedBy: _l, lockedAt: _a, lockExpiresAt: _e, ...unlocked } = current;
    expect(latest).toEqual(unlocked);
  });

  it.each(['0', '2', '-1', '1.5', 'abc', '01', '99999999999'])('answers 404 for version %s', async (v) => {
    const r = await room();
    const artifact = await create(r.alice, 'x');
    expectError(
      await h.get(`${artifactPath(r.space, artifact.id)}/versions/${v}`, { key: r.alice.key }),
      404,
    );
  });

  it('answers 404 for an unknown artifact and 401 for wrong keys', async () => {
    const r = await room();
    const artifact = await create(r.alice, 'x');
    await sdkError(r.alice.artifacts.version(UNKNOWN_ID, 1), NotFoundError);
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
    const artifact = await create(r.alice, 'a\nb\nc\n', 'Plan');
    await lock(r.alice, artifact.id);
    await write(r.alice, artifact.id, 'a\nB\nc\n');
    const { res, body } = await diffOf(r.space, artifact.id, 1, 2, r.bob.key);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/x-diff; charset=utf-8');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
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
        const res = await r.alice.artifacts.diff(artifact.id, from, to).withResponse();
        expectAnswer(res);
        const diff = res.data;
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
    const artifact = await create(r.alice, 'x');
    expectError(await h.get(`${artifactPath(r.space, artifact.id)}/diff${query}`, { key: r.alice.key }), 400);
  });

  it('answers 404 when either version or the artifact is missing', async () => {
    const r = await room();
    const artifact = await create(r.alice, 'x');
    for (const [from, to] of [
      [1, 2],
      [2, 1],
    ] as const) {
      await sdkError(r.alice.artifacts.diff(artifact.id, from, to), NotFoundError);
    }
    // No version number at all (the SDK refuses to send these itself): raw HTTP.
    for (const [from, to] of [
      [0, 1],
      [-1, 1],
    ] as const) {
      const path = `${artifactPath(r.space, artifact.id)}/diff?from=${from}&to=${to}`;
      expectError(await h.get(path, { key: r.alice.key }), 404);
    }
    await sdkError(r.alice.artifacts.diff(UNKNOWN_ID, 1, 1), NotFoundError);
    await sdkError(r.alice.artifacts.diff('x', 1, 1), NotFoundError);
  });

  it('answers 401 for missing, unknown and wrong keys, and on a closed space', async () => {
    const r = await room();
    const artifact = await create(r.alice, 'x');
    const path = `${artifactPath(r.space, artifact.id)}/diff?from=1&to=1`;
    await expectKeyChecks(h, {
      method: 'GET',
      path,
      wrongKeys: { invitation: await h.invite(r.space), 'other space': (await h.createSpace()).ownerKey },
    });
    expectAnswer(await r.space.owner.close().withResponse());
    await sdkError(r.alice.artifacts.diff(artifact.id, 1, 1), AuthenticationError);
  });
});

describe('restoreArtifactVersion', () => {
  it('writes the old content as a new version, byte for byte, refreshing the lock', async () => {
    const r = await room();
    const { artifact } = await historyOf(r);
    clock.advance(5000);
    const res = await r.bob.artifacts.restore(artifact.id, 1).withResponse();
    expectAnswer(res);
    expect(res.data).toMatchObject({
      content: CONTENTS[0],
      version: 5,
      updatedBy: idOf(r.bob),
      updatedAt: at(),
      lockedBy: idOf(r.bob),
      lockExpiresAt: at(600_000),
    });
    const { res: dl, body } = await rawGet(`${artifactPath(r.space, artifact.id)}/download`, r.alice.key);
    expect(dl.status).toBe(200);
    expect(body).toEqual(Buffer.from(CONTENTS[0]!, 'utf8'));
    expect(await r.alice.artifacts.download(artifact.id)).toBe(CONTENTS[0]);
    const diff = await diffOf(r.space, artifact.id, 1, 5, r.alice.key);
    expect(diff.res.status).toBe(200);
    expect(diff.body.length).toBe(0);
    const versions = await r.alice.artifacts.history(artifact.id);
    expect(versions.versions.map((v) => v.version)).toEqual([5, 4, 3, 2, 1]);
    expect(versions.versions[0]?.size).toBe(bytes(CONTENTS[0]!));
  });

  it('restores an empty version too, and lets a muted holder restore', async () => {
    const r = await room();
    const { artifact } = await historyOf(r);
    expectAnswer(await r.space.owner.participants.mute(idOf(r.bob)).withResponse());
    const res = await r.bob.artifacts.restore(artifact.id, 3).withResponse();
    expectAnswer(res);
    expect(res.data).toMatchObject({ content: '', version: 5 });
  });

  it('answers 423 naming the holder to others, without a holder when nobody holds it', async () => {
    const r = await room();
    const { artifact } = await historyOf(r);
    const expectLocked = async (call: PromiseLike<unknown>) => {
      const error = await sdkError(call, LockedError);
      expect(error.body?.lockedBy).toBe(idOf(r.bob));
      expect(typeof error.body?.lockExpiresAt).toBe('string');
    };
    await expectLocked(r.alice.artifacts.restore(artifact.id, 1));
    await expectLocked(r.space.owner.artifacts.restore(artifact.id, 1));
    expectAnswer(await r.bob.artifacts.unlock(artifact.id).withResponse());
    const free = await sdkError(r.bob.artifacts.restore(artifact.id, 1), LockedError);
    expect(free.body).not.toHaveProperty('lockedBy');
    const versions = await r.alice.artifacts.history(artifact.id);
    expect(versions.versions).toHaveLength(4);
  });

  it('answers 404 for a missing version or artifact, even to the holder', async () => {
    const r = await room();
    const artifact = await create(r.alice, 'x');
    await lock(r.alice, artifact.id);
    await sdkError(r.alice.artifacts.restore(artifact.id, 2), NotFoundError);
    // Not a version number at all: only raw HTTP sends that (the SDK refuses 0 itself).
    for (const v of ['0', 'abc'])
      expectError(
        await h.post(`${artifactPath(r.space, artifact.id)}/versions/${v}/restore`, { key: r.alice.key }),
        404,
      );
    await sdkError(r.alice.artifacts.restore(UNKNOWN_ID, 1), NotFoundError);
    await sdkError(r.alice.artifacts.restore('nope', 1), NotFoundError);
  });

  it('answers 401 for missing, unknown and wrong keys, and on a closed space', async () => {
    const r = await room();
    const artifact = await create(r.alice, 'x');
    await lock(r.alice, artifact.id);
    await expectKeyChecks(h, {
      method: 'POST',
      path: `${artifactPath(r.space, artifact.id)}/versions/1/restore`,
      wrongKeys: { invitation: await h.invite(r.space), 'other space': (await h.createSpace()).ownerKey },
    });
    expectAnswer(await r.space.owner.close().withResponse());
    await sdkError(r.alice.artifacts.restore(artifact.id, 1), AuthenticationError);
  });
});
