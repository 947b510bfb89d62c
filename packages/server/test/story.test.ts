import { describe, expect, it } from 'vitest';
import { expectError, expectOk, recordedEvents, useServer } from './helpers';

const { srv, h } = useServer();

/**
 * The curl story, step by step, with the statuses and bodies the specification gives:
 * a private space, an invitation, a join that waits for approval, moderation, and the close.
 */
describe('the story of a private space', () => {
  it('goes from creation to close', async () => {
    // 1. Create a private space: 200 CreateSpaceResult.
    const created = await h.post('/hub/space', {
      body: {
        name: 'Launch review',
        description: 'Go/no-go for the launch',
        privacy: 'private',
        ownerName: 'Lead',
      },
    });
    expectOk(created);
    const { spaceId, ownerId, ownerPrivateKey: ownerKey } = created.body;
    expect(created.body).toEqual({
      spaceId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      ownerId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      ownerPrivateKey: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    const base = `/hub/space/${spaceId}`;

    // 2. Invite: 200 with both links and the key.
    const invite = await h.post(`${base}/invite`, { key: ownerKey });
    expectOk(invite);
    const invitationKey: string = invite.body.publicInvitationKey;
    expect(invite.body.humanLink).toBe(`${srv.url}/join/${spaceId}#key=${invitationKey}`);
    expect(invite.body.agentLink).toBe(
      `${srv.url}/hub/space/${spaceId}/agent.md?key=${encodeURIComponent(invitationKey)}`,
    );

    // The joiner looks before joining: the invitation key reads the space.
    const preview = await h.get(base, { key: invitationKey });
    expectOk(preview);
    expect(preview.body).toMatchObject({ name: 'Launch review', privacy: 'private', state: 'open' });

    // 3. Join: 202 pending, with Location = statusUrl.
    const join = await h.post(`${base}/join`, {
      key: invitationKey,
      body: { name: 'Checker', role: 'qa', isHuman: false },
    });
    expectOk(join, 202);
    const participantId: string = join.body.participantId;
    const statusUrl = `${srv.url}${base}/join/${participantId}`;
    const pollToken: string = join.body.pollToken;
    expect(join.body).toEqual({ participantId, status: 'pending', statusUrl, pollToken });
    expect(join.headers.get('location')).toBe(statusUrl);

    // 4. Poll: 202 pending while the owner has not decided.
    const waiting = await fetch(statusUrl, {
      headers: { 'X-Private-Key': invitationKey, 'X-Poll-Token': pollToken },
    });
    expect(waiting.status).toBe(202);
    expect(await waiting.json()).toEqual({ status: 'pending' });

    // The owner sees the waiting joiner.
    const ownerView = await h.get(base, { key: ownerKey });
    expect(ownerView.body.participants.map((p: any) => [p.participantId, p.status])).toEqual([
      [ownerId, 'active'],
      [participantId, 'waitingForApproval'],
    ]);

    // 5. Approve: 200 { ok: true }.
    const approve = await h.post(`${base}/participants/${participantId}/approve`, { key: ownerKey });
    expectOk(approve);
    expect(approve.body).toEqual({ ok: true });

    // 6. Poll: 200 with the participant key.
    const approved = await fetch(statusUrl, {
      headers: { 'X-Private-Key': invitationKey, 'X-Poll-Token': pollToken },
    });
    expect(approved.status).toBe(200);
    const { participantPrivateKey: key } = (await approved.json()) as any;
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    const mine = await h.get(base, { key });
    expectOk(mine);
    expect(mine.body.participants).toContainEqual(
      expect.objectContaining({
        participantId,
        name: 'Checker',
        role: 'qa',
        status: 'active',
        isOwner: false,
      }),
    );

    // 7. Mute: 200; the participant still reads.
    const mute = await h.post(`${base}/participants/${participantId}/mute`, { key: ownerKey });
    expectOk(mute);
    expect(mute.body).toEqual({ ok: true });
    expectOk(await h.get(base, { key }));

    // 8. Unmute: 200.
    const unmute = await h.post(`${base}/participants/${participantId}/unmute`, { key: ownerKey });
    expectOk(unmute);
    expect(unmute.body).toEqual({ ok: true });

    // 9. Kick: 200; the key stops working at once.
    const kick = await h.post(`${base}/participants/${participantId}/kick`, { key: ownerKey });
    expectOk(kick);
    expect(kick.body).toEqual({ ok: true });
    expectError(await h.get(base, { key }), 401);
    expectError(await h.post(`${base}/participants/${participantId}/kick`, { key: ownerKey }), 409);

    // 10. Close: 200; every key stops working.
    const close = await h.delete(base, { key: ownerKey });
    expectOk(close);
    expect(close.body).toEqual({ ok: true });
    expectError(await h.get(base, { key: ownerKey }), 401);
    expectError(await h.get(base, { key: invitationKey }), 401);
    const again = await h.delete(base, { key: ownerKey });
    expectError(again, 409);
    expect(again.body).toEqual({ error: 'space is closed' });

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
