import { newId, rowsOf, schema } from '@convene/core';
import { AuthenticationError, ConflictError, NotFoundError, type SpaceClient } from '@convene/sdk';
import { and, eq, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  expectAnswer,
  expectKeyChecks,
  idOf,
  type OwnedSpace,
  onPostgres,
  participantRow,
  recordedEvents,
  sdkError,
  useServer,
} from './helpers';

/** Moderation as the owner's SDK client does it; which keys each route refuses over raw HTTP. */
const { srv, h, sdk } = useServer();

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
type Action = 'approve' | 'kick' | 'mute' | 'unmute';
type Space = { spaceId: string };
const statusOf = async (space: Space, participantId: string) =>
  (await participantRow(srv, space.spaceId, participantId))?.status;
/** An artifact locked by `holder` for ten minutes, made directly in the database. */
async function lockedArtifact(space: Space, holder: string): Promise<string> {
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

async function lockHolder(space: Space, artifactId: string): Promise<string | null | undefined> {
  const [row] = await srv.server.database.db
    .select({ lockedBy: schema.artifacts.lockedBy })
    .from(schema.artifacts)
    .where(and(eq(schema.artifacts.spaceId, space.spaceId), eq(schema.artifacts.id, artifactId)));
  return row?.lockedBy;
}

/** The participant-status events recorded for one participant, as [status] in order. */
async function statusEvents(space: Space, participantId: string): Promise<string[]> {
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
    const space = await sdk.createSpace({ privacy: 'private' });
    const pending = await sdk.joinPending(space.owner, { name: 'Waiting' });
    const res = await space.owner.participants.approve(pending.participantId).withResponse();
    expectAnswer(res);
    expect(res.data).toEqual({ ok: true });
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
      lastReadSeq: 0,
    });
  });

  it('answers 409 for a participant who is not waiting, and for the owner', async () => {
    const space = await sdk.createSpace({ privacy: 'private' });
    const { participants } = space.owner;
    const pending = await sdk.joinPending(space.owner);
    expectAnswer(await participants.approve(pending.participantId).withResponse());
    const again = await sdkError(participants.approve(pending.participantId), ConflictError);
    expect(again.body?.error).toMatch(/already active/);
    await sdkError(participants.approve(space.ownerId), ConflictError);
    const refused = await sdk.joinPending(space.owner);
    expectAnswer(await participants.kick(refused.participantId).withResponse());
    await sdkError(participants.approve(refused.participantId), ConflictError);
    expect(await statusOf(space, refused.participantId)).toBe('kicked');
  });

  it('answers 404 for an unknown, non-UUID or other-space participant', async () => {
    const space = await sdk.createSpace({ privacy: 'private' });
    const other = await sdk.createSpace({ privacy: 'private' });
    const elsewhere = await sdk.joinPending(other.owner);
    const { participants } = space.owner;
    await sdkError(participants.approve(UNKNOWN_ID), NotFoundError);
    await sdkError(participants.approve('not-a-uuid'), NotFoundError);
    await sdkError(participants.approve(elsewhere.participantId), NotFoundError);
    expect(await statusOf(other, elsewhere.participantId)).toBe('waitingForApproval');
  });

  it('refuses every key but the owner key', () => ownerOnlyKeyChecks('approve'));
});

describe('kickParticipant', () => {
  it('kicks an active participant: its key answers 401 everywhere', async () => {
    const space = await sdk.createSpace();
    const p = await sdk.joinActive(space.owner, { name: 'Mallory' });
    const res = await space.owner.participants.kick(idOf(p)).withResponse();
    expectAnswer(res);
    expect(res.data).toEqual({ ok: true });
    expect(await statusOf(space, idOf(p))).toBe('kicked');
    // Said as such, so that an agent can tell being removed from a bad key; the stream too.
    const removed = 'this key no longer works: its participant was removed from this space';
    const refused = await sdkError(p.get(), AuthenticationError);
    expect(refused.message).toBe(`401 ${removed}`);
    expect(refused.code).toBe('participant_removed');
    expect((await sdkError(p.leave(), AuthenticationError)).message).toBe(`401 ${removed}`);
    expect((await sdkError(p.messages.send('still here?'), AuthenticationError)).message).toBe(
      `401 ${removed}`,
    );
    const stream = await fetch(`${srv.url}/hub/space/${space.spaceId}/messages/stream`, {
      headers: { 'X-Private-Key': p.key },
    });
    expect(stream.status).toBe(401);
    expect(await stream.json()).toEqual({ error: removed, code: 'participant_removed' });
    expect(await statusEvents(space, idOf(p))).toEqual(['active', 'kicked']);
    const view = await space.owner.get();
    expect(view.participants).toContainEqual(
      expect.objectContaining({ participantId: idOf(p), status: 'kicked' }),
    );
  });

  it('kicks waiting and muted participants too', async () => {
    const space = await sdk.createSpace({ privacy: 'private' });
    const { participants } = space.owner;
    const waiting = await sdk.joinPending(space.owner);
    expectAnswer(await participants.kick(waiting.participantId).withResponse());
    expect(await statusOf(space, waiting.participantId)).toBe('kicked');
    const muted = await sdk.joinActive(space.owner);
    expectAnswer(await participants.mute(idOf(muted)).withResponse());
    expectAnswer(await participants.kick(idOf(muted)).withResponse());
    expect(await statusEvents(space, idOf(muted))).toEqual([
      'waitingForApproval',
      'active',
      'muted',
      'kicked',
    ]);
  });

  it("releases the kicked participant's locks, and only those", async () => {
    const space = await sdk.createSpace();
    const p = await sdk.joinActive(space.owner);
    const bystander = await sdk.joinActive(space.owner);
    const mine = await lockedArtifact(space, idOf(p));
    const theirs = await lockedArtifact(space, idOf(bystander));
    expectAnswer(await space.owner.participants.kick(idOf(p)).withResponse());
    expect(await lockHolder(space, mine)).toBeNull();
    expect(await lockHolder(space, theirs)).toBe(idOf(bystander));
    const unlocked = await recordedEvents(srv, space.spaceId, 'artifact-unlocked');
    expect(unlocked.map((e) => e.data.id)).toEqual([mine]);
  });

  it('answers 409 for a kicked or left participant, and for the owner', async () => {
    const space = await sdk.createSpace();
    const { participants } = space.owner;
    const p = await sdk.joinActive(space.owner);
    expectAnswer(await participants.kick(idOf(p)).withResponse());
    const again = await sdkError(participants.kick(idOf(p)), ConflictError);
    expect(again.body?.error).toMatch(/was kicked/);
    const gone = await sdk.joinActive(space.owner);
    expectAnswer(await gone.leave().withResponse());
    await sdkError(participants.kick(idOf(gone)), ConflictError);
    const owner = await sdkError(participants.kick(space.ownerId), ConflictError);
    expect(owner.body?.error).toMatch(/owner/);
    expectAnswer(await space.owner.get().withResponse());
  });

  it('with ifStatus waitingForApproval refuses a waiting joiner only: one approved meanwhile is answered 409 and stays', async () => {
    const space = await h.createSpace({ privacy: 'private' });
    const kick = (participantId: string) =>
      h.post(`/hub/space/${space.spaceId}/participants/${participantId}/kick`, {
        key: space.ownerKey,
        body: { ifStatus: 'waitingForApproval' },
      });
    const waiting = await h.joinPending(space);
    const refused = await kick(waiting.participantId);
    expect(refused.status, refused.text).toBe(200);
    expect(await statusOf(space, waiting.participantId)).toBe('kicked');
    // Refused again: said as a refusal, the verb asked for, not as a kick.
    const again = await kick(waiting.participantId);
    expect(again.status, again.text).toBe(409);
    expect(again.body).toMatchObject({
      error: 'cannot refuse a participant who was kicked',
      participantStatus: 'kicked',
    });
    // Approved after the owner chose to refuse them: the refusal removes nobody.
    const approved = await h.joinActive(space);
    const late = await kick(approved.participantId);
    expect(late.status, late.text).toBe(409);
    expect(late.body).toEqual({
      error: 'cannot refuse a participant who is already active',
      code: 'participant_status_conflict',
      participantStatus: 'active',
    });
    expect(await statusOf(space, approved.participantId)).toBe('active');
    expect(await statusEvents(space, approved.participantId)).toEqual(['waitingForApproval', 'active']);
    // No other status is asked for.
    const odd = await h.post(`/hub/space/${space.spaceId}/participants/${approved.participantId}/kick`, {
      key: space.ownerKey,
      body: { ifStatus: 'active' },
    });
    expect(odd.status, odd.text).toBe(400);
    expect(await statusOf(space, approved.participantId)).toBe('active');
  });

  it('answers 404 for an unknown participant', async () => {
    const { owner } = await sdk.createSpace();
    await sdkError(owner.participants.kick(UNKNOWN_ID), NotFoundError);
    await sdkError(owner.participants.kick('x'), NotFoundError);
  });

  it('refuses every key but the owner key', () => ownerOnlyKeyChecks('kick'));
});

describe('muteParticipant and unmuteParticipant', () => {
  let space: OwnedSpace;
  let p: SpaceClient;
  beforeAll(async () => {
    space = await sdk.createSpace();
    p = await sdk.joinActive(space.owner);
  });

  it('mutes an active participant, who still reads', async () => {
    const res = await space.owner.participants.mute(idOf(p)).withResponse();
    expectAnswer(res);
    expect(res.data).toEqual({ ok: true });
    expect(await statusOf(space, idOf(p))).toBe('muted');
    const view = await p.get().withResponse();
    expectAnswer(view);
    expect(view.data.participants).toContainEqual(
      expect.objectContaining({ participantId: idOf(p), status: 'muted' }),
    );
  });

  it('answers 409 to muting a muted participant', async () => {
    const error = await sdkError(space.owner.participants.mute(idOf(p)), ConflictError);
    expect(error.body?.error).toMatch(/is muted/);
  });

  it('unmutes a muted participant', async () => {
    const res = await space.owner.participants.unmute(idOf(p)).withResponse();
    expectAnswer(res);
    expect(res.data).toEqual({ ok: true });
    expect(await statusOf(space, idOf(p))).toBe('active');
    expect(await statusEvents(space, idOf(p))).toEqual(['active', 'muted', 'active']);
  });

  it('answers 409 to unmuting an active participant', async () => {
    await sdkError(space.owner.participants.unmute(idOf(p)), ConflictError);
  });

  it('answers 409 to muting or unmuting anyone not active or muted, and the owner', async () => {
    const priv = await sdk.createSpace({ privacy: 'private' });
    const { participants } = priv.owner;
    const waiting = await sdk.joinPending(priv.owner);
    await sdkError(participants.mute(waiting.participantId), ConflictError);
    await sdkError(participants.unmute(waiting.participantId), ConflictError);
    const kicked = await sdk.joinActive(priv.owner);
    expectAnswer(await participants.kick(idOf(kicked)).withResponse());
    await sdkError(participants.mute(idOf(kicked)), ConflictError);
    await sdkError(participants.unmute(idOf(kicked)), ConflictError);
    const left = await sdk.joinActive(priv.owner);
    expectAnswer(await left.leave().withResponse());
    await sdkError(participants.mute(idOf(left)), ConflictError);
    await sdkError(participants.unmute(idOf(left)), ConflictError);
    await sdkError(participants.mute(priv.ownerId), ConflictError);
    await sdkError(participants.unmute(priv.ownerId), ConflictError);
    expect(await statusOf(priv, waiting.participantId)).toBe('waitingForApproval');
  });

  it('answers 404 for unknown participants', async () => {
    await sdkError(space.owner.participants.mute(UNKNOWN_ID), NotFoundError);
    await sdkError(space.owner.participants.unmute(UNKNOWN_ID), NotFoundError);
  });

  it('refuses every key but the owner key (mute)', () => ownerOnlyKeyChecks('mute'));
  it('refuses every key but the owner key (unmute)', () => ownerOnlyKeyChecks('unmute'));
});

describe('leaveSpace', () => {
  it('lets a participant leave: its key then answers 401', async () => {
    const space = await sdk.createSpace();
    const p = await sdk.joinActive(space.owner);
    const res = await p.leave().withResponse();
    expectAnswer(res);
    expect(res.data).toEqual({ ok: true });
    expect(await statusOf(space, idOf(p))).toBe('left');
    const left = 'this key no longer works: its participant left this space';
    expect((await sdkError(p.get(), AuthenticationError)).message).toBe(`401 ${left}`);
    expect((await sdkError(p.leave(), AuthenticationError)).message).toBe(`401 ${left}`);
    expect(await statusEvents(space, idOf(p))).toEqual(['active', 'left']);
  });

  it('lets a muted participant leave, releasing its locks', async () => {
    const space = await sdk.createSpace();
    const p = await sdk.joinActive(space.owner);
    const artifact = await lockedArtifact(space, idOf(p));
    expectAnswer(await space.owner.participants.mute(idOf(p)).withResponse());
    expectAnswer(await p.leave().withResponse());
    expect(await statusOf(space, idOf(p))).toBe('left');
    expect(await lockHolder(space, artifact)).toBeNull();
    const unlocked = await recordedEvents(srv, space.spaceId, 'artifact-unlocked');
    expect(unlocked.map((e) => e.data)).toEqual([expect.objectContaining({ id: artifact, version: 1 })]);
    expect(unlocked[0]?.data.lockedBy).toBeUndefined();
  });

  it('answers 409 to the owner, who closes the space instead', async () => {
    const space = await sdk.createSpace();
    const error = await sdkError(space.owner.leave(), ConflictError);
    expect(error.body?.error).toMatch(/owner/);
    expect(await statusOf(space, space.ownerId)).toBe('active');
  });

  it('answers 404 for an unknown space', async () => {
    const { owner } = await sdk.createSpace();
    const p = await sdk.joinActive(owner);
    await sdkError(sdk.space(UNKNOWN_ID, p.key).leave(), NotFoundError);
    await sdkError(sdk.space('nope', p.key).leave(), NotFoundError);
  });

  it('refuses invitation keys, keys of another space, kicked and left keys', async () => {
    const space = await h.createSpace();
    const other = await h.createSpace();
    const { kicked, left } = await h.deadKeys(space);
    await expectKeyChecks(h, {
      method: 'POST',
      path: `/hub/space/${space.spaceId}/leave`,
      wrongKeys: {
        invitation: await h.invite(space),
        'other space participant': (await h.joinActive(other)).key,
        'other space owner': other.ownerKey,
        kicked,
        left,
      },
    });
  });
});

describe('on a closed space', () => {
  it('answers 409 "space is closed" to every moderation and to leave', async () => {
    const space = await sdk.createSpace({ privacy: 'private' });
    const waiting = await sdk.joinPending(space.owner);
    const active = await sdk.joinActive(space.owner);
    expectAnswer(await space.owner.close().withResponse());
    for (const action of ['approve', 'kick', 'mute', 'unmute'] as const) {
      const target = action === 'approve' ? waiting.participantId : idOf(active);
      const error = await sdkError(space.owner.participants[action](target), ConflictError);
      expect(error.body).toEqual({ error: 'space is closed', code: 'space_closed' });
    }
    const error = await sdkError(active.leave(), ConflictError);
    expect(error.body).toEqual({ error: 'space is closed', code: 'space_closed' });
    expect(await statusOf(space, idOf(active))).toBe('active');
  });
});

describe.runIf(onPostgres())('a moderation or a leave racing a close (PostgreSQL)', () => {
  /**
   * Runs `act` while another transaction holds the space row, closes the space in it, and
   * commits: `act` went past its key check before the close, and reaches the space row after it.
   */
  async function racingClose(spaceId: string, act: () => Promise<{ status: number; body: any }>) {
    const { db } = srv.server.database;
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => {
      locked = resolve;
    });
    let close!: () => void;
    const closing = new Promise<void>((resolve) => {
      close = resolve;
    });
    const closer = db.transaction(async (tx) => {
      await tx
        .select({ id: schema.spaces.id })
        .from(schema.spaces)
        .where(eq(schema.spaces.id, spaceId))
        .for('update');
      locked();
      await closing;
      await tx.update(schema.spaces).set({ state: 'closed' }).where(eq(schema.spaces.id, spaceId));
    });
    await isLocked;
    const acting = act();
    try {
      // Until it has read the key and the participant, and waits on the space row. A fixed 300 ms
      // let a loaded machine's act reach its key check after the close: refused there, with the
      // same 409, the race itself went untested.
      await expect
        .poll(async () => {
          const [row] = rowsOf<{ n: number }>(
            await db.execute(sql`select count(*)::int as n from pg_stat_activity
              where datname = current_database() and wait_event_type = 'Lock'`),
          );
          return row?.n;
        })
        .toBeGreaterThan(0);
    } finally {
      close();
      await closer;
    }
    return acting;
  }

  it('refuses a mute, a kick and a leave the close committed before (409 space_closed), and changes nobody', async () => {
    for (const action of ['mute', 'kick', 'leave'] as const) {
      const space = await h.createSpace();
      const p = await h.joinActive(space);
      const answer = await racingClose(space.spaceId, () =>
        action === 'leave'
          ? h.post(`/hub/space/${space.spaceId}/leave`, { key: p.key })
          : h.post(`/hub/space/${space.spaceId}/participants/${p.participantId}/${action}`, {
              key: space.ownerKey,
            }),
      );
      expect({ action, status: answer.status, code: answer.body.code }).toEqual({
        action,
        status: 409,
        code: 'space_closed',
      });
      expect(await statusOf(space, p.participantId)).toBe('active');
      expect(await statusEvents(space, p.participantId)).toEqual(['active']);
    }
  });
});
