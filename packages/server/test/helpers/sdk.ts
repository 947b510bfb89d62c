import {
  type ClientOptions,
  Convene,
  type ConveneError,
  type CreateSpaceRequest,
  type JoinOptions,
  PendingJoin,
  SpaceClient,
  type WithResponse,
} from '@convene/sdk';
import { expect } from 'vitest';

/** A space created through the SDK: its owner's client and the ids tests name. */
export interface OwnedSpace {
  owner: SpaceClient;
  spaceId: string;
  ownerId: string;
  /** The owner key, for a raw request beside the SDK. */
  ownerKey: string;
}

/**
 * The published SDK pointed at the fixture's server: tests of behaviour drive the service through
 * it, as agents do. Its clients never retry, so each call is one request and one answer, exactly
 * as the raw client's.
 */
export class Sdk {
  readonly #baseUrl: () => string;

  constructor(baseUrl: () => string) {
    this.#baseUrl = baseUrl;
  }

  /** A client holding no key (options as `new Convene(…)`'s). */
  hub(options: Partial<ClientOptions> = {}): Convene {
    return new Convene({ baseUrl: this.#baseUrl(), logLevel: 'off', maxRetries: 0, ...options });
  }

  /** A client bound to one space and key. */
  space(spaceId: string, key: string, participantId?: string): SpaceClient {
    return this.hub().space(spaceId, key, participantId);
  }

  async createSpace(params: Partial<CreateSpaceRequest> = {}, client = this.hub()): Promise<OwnedSpace> {
    const space = await client.spaces.create({
      name: 'Test space',
      description: 'A space for tests',
      ...params,
    });
    return {
      owner: client.space(space.spaceId, space.ownerPrivateKey, space.ownerId),
      spaceId: space.spaceId,
      ownerId: space.ownerId,
      ownerKey: space.ownerPrivateKey,
    };
  }

  /** A joiner active at once (public space), or once the owner approved it (private space). */
  async joinActive(
    owner: SpaceClient,
    params: Partial<JoinOptions> = {},
    client = this.hub(),
  ): Promise<SpaceClient> {
    const joined = await this.join(owner, params, client);
    if (joined instanceof SpaceClient) return joined;
    await owner.participants.approve(joined.participantId);
    const approved = await joined.check();
    expect(approved).toBeInstanceOf(SpaceClient);
    return approved as SpaceClient;
  }

  /** A join of a private space, left waiting for the owner's approval. */
  async joinPending(
    owner: SpaceClient,
    params: Partial<JoinOptions> = {},
    client = this.hub(),
  ): Promise<PendingJoin> {
    const joined = await this.join(owner, { name: 'Joiner', ...params }, client);
    expect(joined).toBeInstanceOf(PendingJoin);
    return joined as PendingJoin;
  }

  private async join(owner: SpaceClient, params: Partial<JoinOptions>, client: Convene) {
    const invitation = await owner.invitations.create();
    return client.join(
      owner.spaceId,
      invitation.publicInvitationKey,
      { name: 'Participant', role: 'tester', isHuman: false, ...params, wait: false },
      {},
    );
  }
}

/** A participant's id, which a client returned by a join (or the factories) always knows. */
export function idOf(client: SpaceClient): string {
  if (!client.participantId) throw new Error('this client was made without its participantId');
  return client.participantId;
}

/** What every success carries: its status and API-Version. */
export function expectAnswer({ response }: WithResponse<unknown>, status = 200): void {
  expect(response.status).toBe(status);
  expect(response.headers.get('api-version')).toBe('1');
}

/**
 * The error a call must fail with, of the SDK's class for the expected status, carrying what every
 * error answer does: a JSON body whose `error` reads, API-Version, and on 401 the discovery header.
 */
export async function sdkError<E extends ConveneError>(
  call: PromiseLike<unknown>,
  Class: abstract new (...args: never[]) => E,
): Promise<E> {
  const error: unknown = await Promise.resolve(call).then(
    (data) => {
      throw new Error(`expected a ${Class.name}, got ${JSON.stringify(data)}`);
    },
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(Class);
  const { headers, body, status } = error as E;
  expect(headers?.get('content-type')).toMatch(/application\/json/);
  expect(typeof body?.error).toBe('string');
  expect(body?.error.length).toBeGreaterThan(0);
  expect(headers?.get('api-version')).toBe('1');
  if (status === 401) {
    expect(headers?.get('www-authenticate')).toMatch(
      /^Bearer resource_metadata="http[^"]+\/\.well-known\/oauth-protected-resource"$/,
    );
  }
  return error as E;
}
