import { newId, schema } from '@convene/core';
import { and, eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  expectError,
  expectKeyChecks,
  expectOk,
  type ParticipantFixture,
  participantRow,
  recordedEvents,
  type SpaceFixture,
  useServer,
} from './helpers';

const { srv, h } = useServer();

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
type Action = 'approve' | 'kick' | 'mute' | 'unmute';
const moderate = (space: SpaceFixture, participantId: string, action: Action, key = space.ownerKey) =>
  h.post(`/hub/space/${space.spaceId}/participants/${participantId}/${action}`, { key });
const leave = (spaceId: string, key: string | undefined) => h.post(`/hub/space/${spaceId}/leave`, { key });
const statusOf = async (space: SpaceFixture, participantId: string) =>
  (await participantRow(srv, space.spaceId, participantId))?.status;

/** An artifact locked by `holder` for ten minutes, made directly in the database. */
async function lockedArtifact(space: SpaceFixture, holder: string): Promise<string> {
  const id = newId();
  const now = new Date();
  await srv.server.database.db.insert(schema.artifacts).values({
    spaceId: space.spaceId,
    id,
    name: `doc-${id.slice(0, 4)}`,
    type: 'markdown',
    content: '# doc',
    version: 1,
    createdBy: holder,
    updatedBy: holder,
    createdAt: now,
    updatedAt: now,
    lockedBy: holder,
    lockedAt: now,
    lockExpiresAt: new Date(now.getTime() + 600_000),
  });
  return id;
}

async function lockHolder(space: SpaceFixture, artifactId: string): Promise<string | null | undefined> {
  const [row] = await srv.server.database.db
    .select({ lockedBy: schema.artifacts.lockedBy })
    .from(schema.artifacts)
    .where(and(eq(schema.artifacts.spaceId, space.spaceId), eq(schema.artifacts.id, artifactId)));
  return row?.lockedBy;
}

/** The participant-status events recorded for one participant, as [status] in order. */
async function statusEvents(space: SpaceFixture, participantId: string): Promise<string[]> {
  return (await recordedEvents(srv, space.spaceId, 'participant-status'))
    .filter((e) => e.data.participantId === participantId)
    .map((e) => e.data.status);
}

/** The owner-only moderation routes must refuse every other key. */
async function ownerOnlyKeyChecks(action: Action): Promise<void> {
  const space = await h.createSpace({ privacy: 'private' });
  const target = await h.joinPending(space);
  const other = await h.createSpace();
  const { kicked, left } = await h.deadKeys(space);
  await expectKeyChecks(h, {
    method: 'POST',
    path: `/hub/space/${space.spaceId}/participants/${target.participantId}/${action}`,
    wrongKeys: {
      participant: (await h.joinActive(space)).key,
      invitation: target.invitationKey,
      'other space owner': other.ownerKey,
      kicked,
      left,
    },
  });
  // None of the refused calls changed anything.
  expect(await statusOf(space, target.participantId)).toBe('waitingForApproval');
}

describe('approveParticipant', () => {
  it('turns a waiting joiner active and announces it', async () => {
    const space = await h.createSpace({ privacy: 'private' });
    const pending = await h.joinPending(space, { name: 'Waiting' });
    const res = await moderate(space, pending.participantId, 'approve');
    expectOk(res);
    expect(res.body).toEqual({ ok: true });
    expect(await statusOf(space, pending.participantId)).toBe('active');
    const events = await recordedEvents(srv, space.spaceId, 'participant-status');
    expect(events.at(-1)?.data).toEqual({
      participantId: pending.participantId,
      name: 'Waiting',
      role: 'tester',
      avatarUrl: `${srv.url}/avatar/${pending.participantId}.svg`,
      status: 'active',
      isOwner: false,
      isHuman: false,
    });
  });

  it('answers 409 for a participant who is not waiting, and for the owner', async () => {
    const space = await h.createSpace({ privacy: 'private' });
    const pending = await h.joinPending(space);
    expectOk(await moderate(space, pending.participantId, 'approve'));
    const again = await moderate(space, pending.participantId, 'approve');
    expectError(again, 409);
    expect(again.body.error).toMatch(/already active/);
    expectError(await moderate(space, space.ownerId, 'approve'), 409);
    const refused = await h.joinPending(space);
    expectOk(await moderate(space, refused.participantId, 'kick'));
    expectError(await moderate(space, refused.participantId, 'approve'), 409);
    expect(await statusOf(space, refused.participantId)).toBe('kicked');
  });

  it('answers 404 for an unknown, non-UUID or other-space participant', async () => {
    const space = await h.createSpace({ privacy: 'private' });
    const other = await h.createSpace({ privacy: 'private' });
    const elsewhere = await h.joinPending(other);
    expectError(await moderate(space, UNKNOWN_ID, 'approve'), 404);
    expectError(await moderate(space, 'not-a-uuid', 'approve'), 404);
    expectError(await moderate(space, elsewhere.participantId, 'approve'), 404);
    expect(await statusOf(other, elsewhere.participantId)).toBe('waitingForApproval');
  });

  it('refuses every key but the owner key', () => ownerOnlyKeyChecks('approve'));
});

describe('kickParticipant', () => {
  it('kicks an active participant: its key answers 401 everywhere', async () => {
    const space = await h.createSpace();
    const p = await h.joinActive(space, { name: 'Mallory' });
    const res = await moderate(space, p.participantId, 'kick');
    expectOk(res);
    expect(res.body).toEqual({ ok: true });
    expect(await statusOf(space, p.participantId)).toBe('kicked');
    expectError(await h.get(`/hub/space/${space.spaceId}`, { key: p.key }), 401);
    expectError(await leave(space.spaceId, p.key), 401);
    expect(await statusEvents(space, p.participantId)).toEqual(['active', 'kicked']);
    const view = await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
    expect(view.body.participants).toContainEqual(
      expect.objectContaining({ participantId: p.participantId, status: 'kicked' }),
    );
  });

  it('kicks waiting and muted participants too', async () => {
    const space = await h.createSpace({ privacy: 'private' });
    const waiting = await h.joinPending(space);
    expectOk(await moderate(space, waiting.participantId, 'kick'));
    expect(await statusOf(space, waiting.participantId)).toBe('kicked');
    const muted = await h.joinActive(space);
    expectOk(await moderate(space, muted.participantId, 'mute'));
    expectOk(await moderate(space, muted.participantId, 'kick'));
    expect(await statusEvents(space, muted.participantId)).toEqual([
      'waitingForApproval',
      'active',
      'muted',
      'kicked',
    ]);
  });

  it("releases the kicked participant's locks, and only those", async () => {
    const space = await h.createSpace();
    const p = await h.joinActive(space);
    const bystander = await h.joinActive(space);
    const mine = await lockedArtifact(space, p.participantId);
    const theirs = await lockedArtifact(space, bystander.participantId);
    expectOk(await moderate(space, p.participantId, 'kick'));
    expect(await lockHolder(space, mine)).toBeNull();
    expect(await lockHolder(space, theirs)).toBe(bystander.participantId);
    const unlocked = await recordedEvents(srv, space.spaceId, 'artifact-unlocked');
    expect(unlocked.map((e) => e.data.id)).toEqual([mine]);
  });

  it('answers 409 for a kicked or left participant, and for the owner', async () => {
    const space = await h.createSpace();
    const p = await h.joinActive(space);
    expectOk(await moderate(space, p.participantId, 'kick'));
    const again = await moderate(space, p.participantId, 'kick');
    expectError(again, 409);
    expect(again.body.error).toMatch(/was kicked/);
    const gone = await h.joinActive(space);
    expectOk(await leave(space.spaceId, gone.key));
    expectError(await moderate(space, gone.participantId, 'kick'), 409);
    const owner = await moderate(space, space.ownerId, 'kick');
    expectError(owner, 409);
    expect(owner.body.error).toMatch(/owner/);
    expectOk(await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey }));
  });

  it('answers 404 for an unknown participant', async () => {
    const space = await h.createSpace();
    expectError(await moderate(space, UNKNOWN_ID, 'kick'), 404);
    expectError(await moderate(space, 'x', 'kick'), 404);
  });

  it('refuses every key but the owner key', () => ownerOnlyKeyChecks('kick'));
});

describe('muteParticipant and unmuteParticipant', () => {
  let space: SpaceFixture;
  let p: ParticipantFixture;
  beforeAll(async () => {
    space = await h.createSpace();
    p = await h.joinActive(space);
  });

  it('mutes an active participant, who still reads', async () => {
    const res = await moderate(space, p.participantId, 'mute');
    expectOk(res);
    expect(res.body).toEqual({ ok: true });
    expect(await statusOf(space, p.participantId)).toBe('muted');
    const view = await h.get(`/hub/space/${space.spaceId}`, { key: p.key });
    expectOk(view);
    expect(view.body.participants).toContainEqual(
      expect.objectContaining({ participantId: p.participantId, status: 'muted' }),
    );
  });

  it('answers 409 to muting a muted participant', async () => {
    const res = await moderate(space, p.participantId, 'mute');
    expectError(res, 409);
    expect(res.body.error).toMatch(/is muted/);
  });

  it('unmutes a muted participant', async () => {
    const res = await moderate(space, p.participantId, 'unmute');
    expectOk(res);
    expect(res.body).toEqual({ ok: true });
    expect(await statusOf(space, p.participantId)).toBe('active');
    expect(await statusEvents(space, p.participantId)).toEqual(['active', 'muted', 'active']);
  });

  it('answers 409 to unmuting an active participant', async () => {
    expectError(await moderate(space, p.participantId, 'unmute'), 409);
  });

  it('answers 409 to muting or unmuting anyone not active or muted, and the owner', async () => {
    const priv = await h.createSpace({ privacy: 'private' });
    const waiting = await h.joinPending(priv);
    expectError(await moderate(priv, waiting.participantId, 'mute'), 409);
    expectError(await moderate(priv, waiting.participantId, 'unmute'), 409);
    const kicked = await h.joinActive(priv);
    expectOk(await moderate(priv, kicked.participantId, 'kick'));
    expectError(await moderate(priv, kicked.participantId, 'mute'), 409);
    expectError(await moderate(priv, kicked.participantId, 'unmute'), 409);
    const left = await h.joinActive(priv);
    expectOk(await leave(priv.spaceId, left.key));
    expectError(await moderate(priv, left.participantId, 'mute'), 409);
    expectError(await moderate(priv, left.participantId, 'unmute'), 409);
    expectError(await moderate(priv, priv.ownerId, 'mute'), 409);
    expectError(await moderate(priv, priv.ownerId, 'unmute'), 409);
    expect(await statusOf(priv, waiting.participantId)).toBe('waitingForApproval');
  });

  it('answers 404 for unknown participants', async () => {
    expectError(await moderate(space, UNKNOWN_ID, 'mute'), 404);
    expectError(await moderate(space, UNKNOWN_ID, 'unmute'), 404);
  });

  it('refuses every key but the owner key (mute)', () => ownerOnlyKeyChecks('mute'));
  it('refuses every key but the owner key (unmute)', () => ownerOnlyKeyChecks('unmute'));
});

describe('leaveSpace', () => {
  it('lets a participant leave: its key then answers 401', async () => {
    const space = await h.createSpace();
    const p = await h.joinActive(space);
    const res = await leave(space.spaceId, p.key);
    expectOk(res);
    expect(res.body).toEqual({ ok: true });
    expect(await statusOf(space, p.participantId)).toBe('left');
    expectError(await h.get(`/hub/space/${space.spaceId}`, { key: p.key }), 401);
    expectError(await leave(space.spaceId, p.key), 401);
    expect(await statusEvents(space, p.participantId)).toEqual(['active', 'left']);
  });

  it('lets a muted participant leave, releasing its locks', async () => {
    const space = await h.createSpace();
    const p = await h.joinActive(space);
    const artifact = await lockedArtifact(space, p.participantId);
    expectOk(await moderate(space, p.participantId, 'mute'));
    expectOk(await leave(space.spaceId, p.key));
    expect(await statusOf(space, p.participantId)).toBe('left');
    expect(await lockHolder(space, artifact)).toBeNull();
    const unlocked = await recordedEvents(srv, space.spaceId, 'artifact-unlocked');
    expect(unlocked.map((e) => e.data)).toEqual([expect.objectContaining({ id: artifact, version: 1 })]);
    expect(unlocked[0]?.data.lockedBy).toBeUndefined();
  });

  it('answers 409 to the owner, who closes the space instead', async () => {
    const space = await h.createSpace();
    const res = await leave(space.spaceId, space.ownerKey);
    expectError(res, 409);
    expect(res.body.error).toMatch(/owner/);
    expect(await statusOf(space, space.ownerId)).toBe('active');
  });

  it('answers 404 for an unknown space', async () => {
    const space = await h.createSpace();
    const p = await h.joinActive(space);
    expectError(await leave(UNKNOWN_ID, p.key), 404);
    expectError(await leave('nope', p.key), 404);
  });

  it('refuses invitation keys, keys of another space, kicked and left keys', async () => {
    const space = await h.createSpace();
    const other = await h.createSpace();
    const kicked = await h.joinActive(space);
    expectOk(await moderate(space, kicked.participantId, 'kick'));
    const left = await h.joinActive(space);
    expectOk(await leave(space.spaceId, left.key));
    await expectKeyChecks(h, {
      method: 'POST',
      path: `/hub/space/${space.spaceId}/leave`,
      wrongKeys: {
        invitation: await h.invite(space),
        'other space participant': (await h.joinActive(other)).key,
        'other space owner': other.ownerKey,
        kicked: kicked.key,
        left: left.key,
      },
    });
  });
});

describe('on a closed space', () => {
  it('answers 409 "space is closed" to every moderation and to leave', async () => {
    const space = await h.createSpace({ privacy: 'private' });
    const waiting = await h.joinPending(space);
    const active = await h.joinActive(space);
    expectOk(await h.delete(`/hub/space/${space.spaceId}`, { key: space.ownerKey }));
    for (const action of ['approve', 'kick', 'mute', 'unmute'] as const) {
      const res = await moderate(
        space,
        action === 'approve' ? waiting.participantId : active.participantId,
        action,
      );
      expectError(res, 409);
      expect(res.body).toEqual({ error: 'space is closed' });
    }
    const res = await leave(space.spaceId, active.key);
    expectError(res, 409);
    expect(res.body).toEqual({ error: 'space is closed' });
    expect(await statusOf(space, active.participantId)).toBe('active');
  });
});
