import { type AddressInfo, createServer } from 'node:net';
import { inject } from 'vitest';
import { type ClientOptions, Convene, type JoinedSpaceClient } from '../../src';

export const serverUrl = (): string => inject('serverUrl');

/** A client of the shared server; quiet unless a test asks for a logger. */
export function hub(options: Partial<ClientOptions> = {}): Convene {
  return new Convene({ baseUrl: serverUrl(), logLevel: 'off', ...options });
}

/** A fresh open space and its owner's client. */
export async function ownedSpace(
  client = hub(),
  params: { privacy?: 'public' | 'private'; name?: string } = {},
): Promise<{ owner: JoinedSpaceClient; spaceId: string; ownerId: string }> {
  const space = await client.spaces.create({
    name: params.name ?? 'SDK test space',
    description: 'made by the SDK tests',
    ...(params.privacy ? { privacy: params.privacy } : {}),
  });
  return {
    owner: client.space(space.spaceId, space.ownerPrivateKey, space.ownerId),
    spaceId: space.spaceId,
    ownerId: space.ownerId,
  };
}

/** A participant admitted to the owner's (public) space. */
export async function participant(
  owner: JoinedSpaceClient,
  name = 'Agent',
  client = hub(),
): Promise<JoinedSpaceClient> {
  const invitation = await owner.invitations.create();
  return client.join(invitation.agentLink, { name, role: 'tester', isHuman: false });
}

/** Polls `check` until it returns something other than undefined (or throws after `timeoutMs`). */
export async function until<T>(
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A port nothing listens on: one the system just handed out and took back. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A 503 as a server or proxy briefly unavailable sends it, with this Retry-After. */
export const unavailable = (retryAfter: string) => () =>
  new Response(JSON.stringify({ error: 'the service is briefly unavailable (synthetic)' }), {
    status: 503,
    headers: { 'content-type': 'application/json', 'retry-after': retryAfter },
  });

/** One request a scripted fetch of the tests saw, and whether the server said it replayed it. */
export interface Sent {
  method: string;
  url: string;
  idempotencyKey: string | null;
  /** The answer's `Idempotency-Replayed`, once the server answered. */
  replayed?: string | null;
}
