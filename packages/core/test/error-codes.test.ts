import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createArtifact, InlineDiffEngine, lockArtifact, writeArtifact } from '../src/artifacts';
import { FakeClock } from '../src/clock';
import { type Deps, defaultCoreConfig } from '../src/deps';
import { DomainError, type ErrorKind, type SpecificCode } from '../src/errors';
import { createNotifyBus } from '../src/events/event-bus';
import { Sealer } from '../src/infra/sealer';
import {
  approveParticipant,
  createInvitation,
  getJoinStatus,
  JOIN_KEY_WINDOW_MS,
  joinSpace,
  kickParticipant,
  leaveSpace,
  muteParticipant,
  sweepCollectedJoinKeys,
} from '../src/participants';
import { SecretBox } from '../src/secrets';
import { closeSpace, createSpace, getSpace, updateSpace } from '../src/spaces';
import { openTestDatabase, type TestDatabase } from '../src/testing';

let t: TestDatabase;
let deps: Deps;
let clock: FakeClock;

beforeAll(async () => {
  t = await openTestDatabase();
  clock = new FakeClock();
  // Only what these use cases read.
  deps = {
    db: t.database.db,
    clock,
    box: new Sealer(new SecretBox('error-codes-test-secret-0123456789')),
    diffs: new InlineDiffEngine(),
    events: createNotifyBus(t.database),
    config: defaultCoreConfig,
  } as unknown as Deps;
});
afterAll(() => t?.close());

/** The error a call rejects with: its kind, its specific code (undefined: none) and message. */
async function refusal(
  call: Promise<unknown>,
): Promise<{ kind: ErrorKind; code?: SpecificCode; message: string }> {
  const error = await call.then(
    () => expect.unreachable('the call should have been refused'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DomainError);
  const { kind, code, message } = error as DomainError;
  return code === undefined ? { kind, message } : { kind, code, message };
}

/** A space with its owner key and an invitation key, private ones admitting by approval. */
async function space(privacy: 'public' | 'private' = 'public', ttl = 3600) {
  const { spaceId, ownerPrivateKey: owner } = await createSpace({
    deps,
    input: { name: 'Codes', description: '', privacy, ttl },
  });
  const { publicInvitationKey: invitation } = await createInvitation({ deps, spaceId, key: owner });
  const join = async (name: string) =>
    (await joinSpace({ deps, spaceId, key: invitation, input: { name } })).result;
  return { spaceId, owner, invitation, join };
}

describe('the specific codes of the key checks', () => {
  it('tells a missing key, an unknown one and one of the wrong kind apart', async () => {
    const { spaceId, invitation, join } = await space();
    const { participantPrivateKey: key } = await join('Ada');
    expect(await refusal(getSpace({ deps, spaceId, key: undefined }))).toMatchObject({
      kind: 'UNAUTHORIZED',
      code: 'key_required',
    });
    expect(await refusal(getSpace({ deps, spaceId, key: 'f'.repeat(64) }))).toEqual({
      kind: 'UNAUTHORIZED',
      code: 'key_unknown',
      message: 'unknown key for this space',
    });
    expect(await refusal(updateSpace({ deps, spaceId, key, input: { name: 'x' } }))).toEqual({
      kind: 'UNAUTHORIZED',
      code: 'owner_key_required',
      message: 'this operation needs the owner key',
    });
    expect(
      await refusal(
        createArtifact({
          deps,
          spaceId,
          key: invitation,
          input: { name: 'a', type: 'markdown', content: 'x' },
        }),
      ),
    ).toMatchObject({ kind: 'UNAUTHORIZED', code: 'wrong_key_type' });
  });

  it('says a kicked participant was removed and a departed one left, on every route', async () => {
    const { spaceId, owner, join } = await space();
    const kicked = await join('Kicked');
    const gone = await join('Gone');
    await kickParticipant({ deps, spaceId, participantId: kicked.participantId, key: owner });
    await leaveSpace({ deps, spaceId, key: gone.participantPrivateKey });
    for (const call of [
      () => getSpace({ deps, spaceId, key: kicked.participantPrivateKey }),
      () => leaveSpace({ deps, spaceId, key: kicked.participantPrivateKey }),
    ])
      expect(await refusal(call())).toEqual({
        kind: 'UNAUTHORIZED',
        code: 'participant_removed',
        message: 'this key no longer works: its participant was removed from this space',
      });
    expect(await refusal(getSpace({ deps, spaceId, key: gone.participantPrivateKey }))).toEqual({
      kind: 'UNAUTHORIZED',
      code: 'participant_left',
      message: 'this key no longer works: its participant left this space',
    });
  });

  it('tells a closed space from an expired one, in its 401 message and in the code of both statuses', async () => {
    const closed = await space();
    await closeSpace({ deps, spaceId: closed.spaceId, key: closed.owner });
    expect(await refusal(getSpace({ deps, spaceId: closed.spaceId, key: closed.owner }))).toEqual({
      kind: 'UNAUTHORIZED',
      code: 'space_closed',
      message: 'space is closed: its keys no longer work',
    });
    expect(await refusal(closeSpace({ deps, spaceId: closed.spaceId, key: closed.owner }))).toEqual({
      kind: 'CONFLICT',
      code: 'space_closed',
      message: 'space is closed',
    });

    const expiring = await space('public', 60);
    clock.advance(60_000);
    expect(await refusal(getSpace({ deps, spaceId: expiring.spaceId, key: expiring.owner }))).toEqual({
      kind: 'UNAUTHORIZED',
      code: 'space_expired',
      message: 'space has expired: its keys no longer work',
    });
    // The 409 keeps decisions.md's words; its code says why.
    for (const call of [
      () => closeSpace({ deps, spaceId: expiring.spaceId, key: expiring.owner }),
      () => joinSpace({ deps, spaceId: expiring.spaceId, key: expiring.invitation, input: { name: 'Late' } }),
    ])
      expect(await refusal(call())).toEqual({
        kind: 'CONFLICT',
        code: 'space_expired',
        message: 'space is closed',
      });
  });
});

describe('the specific codes of the rules', () => {
  it('refuses a muted participant with participant_muted', async () => {
    const { spaceId, owner, join } = await space();
    const muted = await join('Muted');
    await muteParticipant({ deps, spaceId, participantId: muted.participantId, key: owner });
    const input = { name: 'a', type: 'markdown', content: 'x' } as const;
    expect(await refusal(createArtifact({ deps, spaceId, key: muted.participantPrivateKey, input }))).toEqual(
      {
        kind: 'FORBIDDEN',
        code: 'participant_muted',
        message: 'a muted participant cannot create artifacts',
      },
    );
  });

  it('codes a moderation of the wrong status, a refused join, and nothing generic', async () => {
    const { spaceId, owner, invitation } = await space('private');
    const joined = await joinSpace({ deps, spaceId, key: invitation, input: { name: 'Waiting' } });
    const { participantId, pollToken } = joined.result;
    const kept = await joinSpace({ deps, spaceId, key: invitation, input: { name: 'Kept' } });
    await approveParticipant({ deps, spaceId, participantId: kept.result.participantId, key: owner });
    expect(
      await refusal(
        approveParticipant({ deps, spaceId, participantId: kept.result.participantId, key: owner }),
      ),
    ).toEqual({
      kind: 'CONFLICT',
      code: 'participant_status_conflict',
      message: 'cannot approve a participant who is already active',
    });
    await kickParticipant({ deps, spaceId, participantId, key: owner });
    expect(
      await refusal(getJoinStatus({ deps, spaceId, participantId, key: invitation, pollToken })),
    ).toEqual({
      kind: 'NOT_FOUND',
      code: 'join_refused',
      message: 'join request refused: the owner turned it down',
    });
    // A cause no caller acts on differently keeps the generic code of its status.
    expect(
      await refusal(muteParticipant({ deps, spaceId, participantId: owner.slice(0, 8), key: owner })),
    ).toEqual({
      kind: 'NOT_FOUND',
      message: 'participant not found',
    });
  });

  it('codes a poll of a join whose key was handed out apart from one of a join it cannot name', async () => {
    const { spaceId, owner, invitation } = await space('private');
    const poll = (participantId: string, pollToken?: string) =>
      getJoinStatus({ deps, spaceId, participantId, key: invitation, pollToken });
    const { participantId, pollToken } = (
      await joinSpace({ deps, spaceId, key: invitation, input: { name: 'Once' } })
    ).result;
    const collected = {
      kind: 'NOT_FOUND',
      code: 'join_key_collected',
      message:
        'pending join request not found: its key was already handed out (by the join’s own answer in a public space, or by a poll more than 10 minutes ago): use the key saved then',
    };
    const unnamed = {
      kind: 'NOT_FOUND',
      message: 'pending join request not found: no join of this invitation and pollToken waits under this id',
    };
    // Waiting: another pollToken names nothing.
    expect(await refusal(poll(participantId, `poll_${'A'.repeat(43)}`))).toEqual(unnamed);
    await approveParticipant({ deps, spaceId, participantId, key: owner });
    const key = (await poll(participantId, pollToken)).result.participantPrivateKey;
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    // The same joiner may collect it again for a while; without its pollToken, nobody may.
    expect((await poll(participantId, pollToken)).result.participantPrivateKey).toBe(key);
    expect(await refusal(poll(participantId))).toMatchObject({
      kind: 'UNAUTHORIZED',
      code: 'poll_token_required',
    });
    // Collected for good once the window is over, swept or not yet: said so, whichever pollToken
    // comes (the participant is in getSpace for all to see).
    clock.advance(JOIN_KEY_WINDOW_MS);
    expect(await refusal(poll(participantId, pollToken))).toEqual(collected);
    expect(await sweepCollectedJoinKeys(deps.db, clock.now(), 100)).toBe(1);
    expect(await refusal(poll(participantId, pollToken))).toEqual(collected);
    expect(await refusal(poll(participantId))).toEqual(collected);
    // Nobody under this id, the owner (who never joined), a join of another invitation: nothing.
    expect(await refusal(poll('3f2e0000-0000-4000-8000-000000000009', pollToken))).toEqual(unnamed);
    const view = await getSpace({ deps, spaceId, key: owner });
    const ownerId = view.participants.find((p) => p.isOwner)!.participantId;
    expect(await refusal(poll(ownerId))).toEqual(unnamed);
    const { publicInvitationKey: other } = await createInvitation({ deps, spaceId, key: owner });
    const elsewhere = (await joinSpace({ deps, spaceId, key: other, input: { name: 'Else' } })).result;
    expect(await refusal(poll(elsewhere.participantId, elsewhere.pollToken))).toEqual(unnamed);
    // A public space's joiner had its key in the join's answer.
    const open = await space('public');
    const joined = await open.join('Public');
    expect(
      await refusal(
        getJoinStatus({
          deps,
          spaceId: open.spaceId,
          participantId: joined.participantId,
          key: open.invitation,
          pollToken: undefined,
        }),
      ),
    ).toEqual(collected);
  });

  it('codes the locks and a stale baseVersion', async () => {
    const { spaceId, join } = await space();
    const ada = await join('Ada');
    const bob = await join('Bob');
    const artifact = await createArtifact({
      deps,
      spaceId,
      key: ada.participantPrivateKey,
      input: { name: 'Plan', type: 'markdown', content: 'a\n' },
    });
    const write = (key: string | undefined, baseVersion?: number) =>
      writeArtifact({
        deps,
        spaceId,
        artifactId: artifact.id,
        key,
        input: baseVersion === undefined ? { content: 'b\n' } : { content: 'b\n', baseVersion },
      });
    expect(await refusal(write(ada.participantPrivateKey))).toMatchObject({
      kind: 'LOCKED',
      code: 'lock_not_held',
    });
    await lockArtifact({ deps, spaceId, artifactId: artifact.id, key: ada.participantPrivateKey });
    expect(await refusal(write(bob.participantPrivateKey))).toMatchObject({
      kind: 'LOCKED',
      code: 'lock_held',
    });
    expect(await refusal(write(ada.participantPrivateKey, 7))).toMatchObject({
      kind: 'CONFLICT',
      code: 'version_conflict',
    });
  });
});
