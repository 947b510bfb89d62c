import { expect } from 'vitest';
import { Api, type RequestOptions } from './api';

export interface SpaceFixture {
  spaceId: string;
  ownerId: string;
  ownerKey: string;
}

export interface ParticipantFixture {
  participantId: string;
  key: string;
}

/** Factories that keep tests short: each one is a real HTTP call that must succeed. */
export class Harness extends Api {
  async createSpace(
    body: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ): Promise<SpaceFixture> {
    const res = await this.post('/hub/space', {
      body: { name: 'Test space', description: 'A space for tests', ...body },
      headers,
    });
    expect(res.status, res.text).toBe(200);
    return { spaceId: res.body.spaceId, ownerId: res.body.ownerId, ownerKey: res.body.ownerPrivateKey };
  }

  async invite(space: SpaceFixture): Promise<string> {
    const res = await this.post(`/hub/space/${space.spaceId}/invite`, { key: space.ownerKey });
    expect(res.status, res.text).toBe(200);
    return res.body.publicInvitationKey;
  }

  /** A participant active at once (public space), or approved by the owner (private space). */
  async joinActive(
    space: SpaceFixture,
    body: Record<string, unknown> = {},
    options: Pick<RequestOptions, 'headers'> = {},
  ): Promise<ParticipantFixture> {
    const invitationKey = await this.invite(space);
    const res = await this.post(`/hub/space/${space.spaceId}/join`, {
      key: invitationKey,
      body: { name: 'Participant', role: 'tester', isHuman: false, ...body },
      ...options,
    });
    if (res.status === 200)
      return { participantId: res.body.participantId, key: res.body.participantPrivateKey };
    expect(res.status, res.text).toBe(202);
    const approve = await this.post(
      `/hub/space/${space.spaceId}/participants/${res.body.participantId}/approve`,
      {
        key: space.ownerKey,
      },
    );
    expect(approve.status, approve.text).toBe(200);
    const poll = await this.get(`/hub/space/${space.spaceId}/join/${res.body.participantId}`, {
      key: invitationKey,
    });
    expect(poll.status, poll.text).toBe(200);
    return { participantId: res.body.participantId, key: poll.body.participantPrivateKey };
  }
}
