import fc from 'fast-check';
import type { Harness } from '../test/helpers';
import { linkAgent, mintToken, signup, startLink } from '../test/helpers/accounts';
import { hostileString } from './schema-arbitrary';

/**
 * What an operation's requests can name: real ids and live credentials, made afresh for each
 * operation so that one operation's effects (a closed space, a kicked participant) never starve
 * the next of valid requests.
 */
export interface Fixture {
  spaceId: string;
  ownerKey: string;
  participantId: string;
  participantKey: string;
  invitationKey: string;
  /** A joiner waiting for approval: in `spaceId` when the space is private. */
  pendingId: string;
  pollToken: string;
  artifactId: string;
  jwt: string;
  userToken: string;
  tokenId: string;
  userCode: string;
  deviceCode: string;
}

/**
 * Operations on joiners get a private space, where a join waits and there is someone to approve;
 * every other operation a public one.
 */
export const wantsPrivateSpace = (operation: string): boolean => /participant|join_?status/i.test(operation);

/** Placeholders where an operation needs no account: signing up costs a password hash. */
const NO_ACCOUNT = {
  jwt: 'no.account.made',
  userToken: 'usr_none',
  tokenId: '00000000-0000-4000-8000-000000000000',
  userCode: 'BBBB-BBBB',
  deviceCode: 'none',
};

export async function makeFixture(
  h: Harness,
  privacy: 'public' | 'private',
  withAccount: boolean,
): Promise<Fixture> {
  const space = await h.createSpace({ name: 'Fuzz', description: 'fuzzing', privacy });
  const participant = await h.joinActive(space);
  const waitingIn = privacy === 'private' ? space : await h.createSpace({ privacy: 'private' });
  const pending = await h.joinPending(waitingIn);
  const artifactPath = `/hub/space/${space.spaceId}/artifact`;
  const artifact = await h.post(artifactPath, {
    key: space.ownerKey,
    body: { name: 'doc', type: 'markdown', content: 'one\ntwo\n' },
  });
  await h.post(`${artifactPath}/${artifact.body.id}/lock`, { key: space.ownerKey });
  await h.patch(`${artifactPath}/${artifact.body.id}`, {
    key: space.ownerKey,
    body: { content: 'one\n2\n' },
  });
  const account = withAccount ? await makeAccount(h) : NO_ACCOUNT;
  return {
    spaceId: space.spaceId,
    ownerKey: space.ownerKey,
    participantId: participant.participantId,
    participantKey: participant.key,
    invitationKey: pending.invitationKey,
    pendingId: pending.participantId,
    pollToken: pending.pollToken,
    artifactId: artifact.body.id,
    ...account,
  };
}

/** A human with a session, a user token, a linked agent and a link request waiting for them. */
async function makeAccount(h: Harness): Promise<Pick<Fixture, keyof typeof NO_ACCOUNT>> {
  const human = await signup(h);
  const token = await mintToken(h, human);
  await linkAgent(h, human);
  const link = await startLink(h, 'Fuzz agent');
  return {
    jwt: human.jwt,
    userToken: token.token,
    tokenId: token.id,
    userCode: link.userCode,
    deviceCode: link.deviceCode,
  };
}

const junkSegment = fc.oneof(hostileString, fc.string({ maxLength: 12 }), fc.uuid());

/**
 * A value for a parameter that names something (a path segment or a tool argument): mostly the
 * fixture's, sometimes anything; undefined when the name is not one of those.
 */
export function namedValue(name: string, f: Fixture): fc.Arbitrary<unknown> | undefined {
  const known: Record<string, unknown[]> = {
    spaceId: [f.spaceId],
    participantId: [f.participantId, f.pendingId],
    artifactId: [f.artifactId],
    version: ['1', '2', '3', '0'],
    userCode: [f.userCode],
    tokenId: [f.tokenId],
    pollToken: [f.pollToken],
    deviceCode: [f.deviceCode],
  };
  const real = known[name];
  if (!real) return undefined;
  return fc.oneof({ arbitrary: fc.constantFrom(...real), weight: 5 }, { arbitrary: junkSegment, weight: 1 });
}

/** What an HTTP header can carry at all (fetch refuses the rest before sending). */
export const headerSafe = (value: string): string => value.replace(/[^\x20-\x7e]/g, '');

const hex = fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 64, maxLength: 64 });

/** A space key: one of the fixture's three, or an invented one. */
export function spaceKey(f: Fixture): fc.Arbitrary<string> {
  return fc.oneof(
    { arbitrary: fc.constantFrom(f.ownerKey, f.participantKey, f.invitationKey), weight: 3 },
    { arbitrary: fc.oneof(hostileString, hex).map(headerSafe), weight: 1 },
  );
}

/** Credentials as headers, by what the operation accepts: none, invented, or the fixture's. */
export function credentials(
  f: Fixture,
  accepts: { spaceKey: boolean; jwt: boolean; userToken: boolean },
): fc.Arbitrary<Record<string, string>> {
  const options: fc.Arbitrary<Record<string, string>>[] = [
    fc.constant({}),
    fc.oneof(hostileString, hex).map((k) => ({ 'X-Private-Key': headerSafe(k) })),
  ];
  if (accepts.spaceKey) options.push(spaceKey(f).map((k) => ({ 'X-Private-Key': k })));
  if (accepts.jwt) options.push(fc.constant({ Authorization: `Bearer ${f.jwt}` }));
  if (accepts.userToken) options.push(fc.constant({ 'X-User-Token': f.userToken }));
  return fc.oneof(...options.map((arbitrary, i) => ({ arbitrary, weight: i === 0 ? 1 : 3 })));
}
