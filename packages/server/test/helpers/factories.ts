import { schema } from '@convene/core';
import { and, asc, eq } from 'drizzle-orm';
import { expect } from 'vitest';
import { Api, type RequestOptions } from './api';
import type { TestServer } from './harness';

export interface SpaceFixture {
  spaceId: string;
  ownerId: string;
  ownerKey: string;
}

export interface ParticipantFixture {
  participantId: string;
  key: string;
}

export interface PendingJoinFixture {
  participantId: string;
  /** The invitation key the join was made with: the one getJoinStatus answers to. */
  invitationKey: string;
  statusUrl: string;
  /** What only this joiner holds: getJoinStatus wants it as X-Poll-Token. */
  pollToken: string;
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

  /** A markdown document `name` in `space`, created with `key` (the owner's by default): its id. */
  async createArtifact(
    space: SpaceFixture,
    name: string,
    content: string,
    key = space.ownerKey,
  ): Promise<string> {
    const res = await this.post(`/hub/space/${space.spaceId}/artifact`, {
      key,
      body: { name, type: 'markdown', content },
    });
    expect(res.status, res.text).toBe(200);
    return res.body.id;
  }

  /** The dead keys of a kicked and of a departed participant of `space`: they answer 401 everywhere. */
  async deadKeys(space: SpaceFixture): Promise<{ kicked: string; left: string }> {
    const kicked = await this.joinActive(space, { name: 'Kicked' });
    const kick = await this.post(`/hub/space/${space.spaceId}/participants/${kicked.participantId}/kick`, {
      key: space.ownerKey,
    });
    expect(kick.status, kick.text).toBe(200);
    const left = await this.joinActive(space, { name: 'Left' });
    const leave = await this.post(`/hub/space/${space.spaceId}/leave`, { key: left.key });
    expect(leave.status, leave.text).toBe(200);
    return { kicked: kicked.key, left: left.key };
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
      headers: { 'X-Poll-Token': res.body.pollToken },
    });
    expect(poll.status, poll.text).toBe(200);
    return { participantId: res.body.participantId, key: poll.body.participantPrivateKey };
  }

  /** A join of a private space, left waiting for approval (202). */
  async joinPending(
    space: SpaceFixture,
    body: Record<string, unknown> = {},
    options: Pick<RequestOptions, 'headers'> = {},
  ): Promise<PendingJoinFixture> {
    const invitationKey = await this.invite(space);
    const res = await this.post(`/hub/space/${space.spaceId}/join`, {
      key: invitationKey,
      body: { name: 'Joiner', role: 'tester', isHuman: false, ...body },
      ...options,
    });
    expect(res.status, res.text).toBe(202);
    return {
      participantId: res.body.participantId,
      invitationKey,
      statusUrl: res.body.statusUrl,
      pollToken: res.body.pollToken,
    };
  }
}

/** The stream events a space recorded (space_events), oldest first, optionally of one kind. */
export async function recordedEvents(
  srv: TestServer,
  spaceId: string,
  kind?: string,
): Promise<{ seq: number; kind: string; data: any }[]> {
  const { spaceEvents } = schema;
  const rows = await srv.server.database.db
    .select({ seq: spaceEvents.seq, kind: spaceEvents.kind, data: spaceEvents.data })
    .from(spaceEvents)
    .where(
      kind
        ? and(eq(spaceEvents.spaceId, spaceId), eq(spaceEvents.kind, kind))
        : eq(spaceEvents.spaceId, spaceId),
    )
    .orderBy(asc(spaceEvents.seq));
  return rows;
}

/** A participant's stored row, as the database holds it. */
export async function participantRow(srv: TestServer, spaceId: string, participantId: string) {
  const { participants } = schema;
  const [row] = await srv.server.database.db
    .select()
    .from(participants)
    .where(and(eq(participants.spaceId, spaceId), eq(participants.id, participantId)));
  return row;
}
