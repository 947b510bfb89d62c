import { AuthenticationError, ConflictError, PendingJoin, SpaceClient } from '@convene/sdk';
import { describe, expect, it } from 'vitest';
import { expectAnswer, recordedEvents, sdkError, useServer } from './helpers';

const { srv, sdk } = useServer();

/**
 * The curl story, step by step, as an agent lives it through the SDK, with the statuses
 * and bodies the specification gives: a private space, an invitation, a join that waits for
 * approval, moderation, and the close.
 */
describe('the story of a private space', () => {
  it('goes from creation to close', async () => {
    const hub = sdk.hub();
    // 1. Create a private space: 200 CreateSpaceResult.
    const created = await hub.spaces
      .create({
        name: 'Launch review',
        description: 'Go/no-go for the launch',
        privacy: 'private',
        ownerName: 'Lead',
      })
      .withResponse();
    expectAnswer(created);
    const { spaceId, ownerId, ownerPrivateKey: ownerKey } = created.data;
    expect(created.data).toEqual({
      spaceId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      ownerId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      ownerPrivateKey: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    const owner = hub.space(spaceId, ownerKey, ownerId);

    // 2. Invite: 200 with both links and the key.
    const invite = await owner.invitations.create().withResponse();
    expectAnswer(invite);
    const invitationKey = invite.data.publicInvitationKey;
    expect(invite.data.humanLink).toBe(`${srv.url}/join/${spaceId}#key=${invitationKey}`);
    expect(invite.data.agentLink).toBe(
      `${srv.url}/hub/space/${spaceId}/agent.md?key=${encodeURIComponent(invitationKey)}`,
    );

    // The joiner looks before joining: the invitation key reads the space.
    const invited = hub.space(spaceId, invitationKey);
    const preview = await invited.get().withResponse();
    expectAnswer(preview);
    expect(preview.data).toMatchObject({ name: 'Launch review', privacy: 'private', state: 'open' });

    // 3. Join with the agent link: 202 pending, with Location = statusUrl.
    const join = await hub
      .join(invite.data.agentLink, { name: 'Checker', role: 'qa', isHuman: false, wait: false })
      .withResponse();
    expectAnswer(join, 202);
    expect(join.data).toBeInstanceOf(PendingJoin);
    const pending = join.data as PendingJoin;
    const participantId = pending.participantId;
    const statusUrl = `${srv.url}/hub/space/${spaceId}/join/${participantId}`;
    expect({
      participantId,
      status: pending.status,
      statusUrl: pending.statusUrl,
      pollToken: pending.pollToken,
    }).toEqual({ participantId, status: 'pending', statusUrl, pollToken: expect.any(String) });
    expect(join.response.headers.get('location')).toBe(statusUrl);

    // 4. Poll: 202 pending while the owner has not decided.
    const waiting = await pending.check().withResponse();
    expectAnswer(waiting, 202);
    expect(waiting.data).toBeNull();

    // The owner sees the waiting joiner.
    const ownerView = await owner.get();
    expect(ownerView.participants.map((p) => [p.participantId, p.status])).toEqual([
      [ownerId, 'active'],
      [participantId, 'waitingForApproval'],
    ]);

    // 5. Approve: 200 { ok: true }.
    const approve = await owner.participants.approve(participantId).withResponse();
    expectAnswer(approve);
    expect(approve.data).toEqual({ ok: true });

    // 6. Poll: 200 with the participant key.
    const approved = await pending.check().withResponse();
    expectAnswer(approved);
    expect(approved.data).toBeInstanceOf(SpaceClient);
    const me = approved.data as SpaceClient;
    expect(me.key).toMatch(/^[0-9a-f]{64}$/);
    expect(me.participantId).toBe(participantId);
    const mine = await me.get().withResponse();
    expectAnswer(mine);
    expect(mine.data.participants).toContainEqual(
      expect.objectContaining({
        participantId,
        name: 'Checker',
        role: 'qa',
        status: 'active',
        isOwner: false,
      }),
    );

    // 7. Mute: 200; the participant still reads.
    const mute = await owner.participants.mute(participantId).withResponse();
    expectAnswer(mute);
    expect(mute.data).toEqual({ ok: true });
    expectAnswer(await me.get().withResponse());

    // 8. Unmute: 200.
    const unmute = await owner.participants.unmute(participantId).withResponse();
    expectAnswer(unmute);
    expect(unmute.data).toEqual({ ok: true });

    // 9. Kick: 200; the key stops working at once.
    const kick = await owner.participants.kick(participantId).withResponse();
    expectAnswer(kick);
    expect(kick.data).toEqual({ ok: true });
    await sdkError(me.get(), AuthenticationError);
    await sdkError(owner.participants.kick(participantId), ConflictError);

    // 10. Close: 200; every key stops working.
    const close = await owner.close().withResponse();
    expectAnswer(close);
    expect(close.data).toEqual({ ok: true });
    await sdkError(owner.get(), AuthenticationError);
    await sdkError(invited.get(), AuthenticationError);
    const again = await sdkError(owner.close(), ConflictError);
    expect(again.body).toEqual({ error: 'space is closed', code: 'space_closed' });

    // The stream heard every step, in order.
    const events = await recordedEvents(srv, spaceId);
    expect(
      events.map((e) => (e.kind === 'participant-status' ? `${e.kind}:${e.data.status}` : e.kind)),
    ).toEqual([
      'participant-status:waitingForApproval',
      'participant-status:active',
      'participant-status:muted',
      'participant-status:active',
      'participant-status:kicked',
      'space-closed',
    ]);
    expect(events.at(-1)?.data).toEqual({ spaceId, reason: 'closed' });
    expect(events.map((e) => e.seq)).toEqual([...events.map((e) => e.seq)].sort((a, b) => a - b));
  });
});
