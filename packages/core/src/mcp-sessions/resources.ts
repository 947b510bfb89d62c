import { limits } from '@convene/contract';
import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import { findArtifact } from '../artifacts/shared';
import { authorize, roles } from '../auth/authorize';
import { rowsOf } from '../db/migrate';
import { artifacts, invitations, mcpSubscriptions, participants, spaces } from '../db/schema';
import type { Deps } from '../deps';
import { ValidationError } from '../errors';
import { formatMicros, type MessageRow, messageRowColumns, toMessageView } from '../messages/views';
import { hashSecret } from '../secrets';
import { isClosed } from '../spaces/views';
import { MCP_SESSIONS_CHANNEL } from './sessions';

/** A space's transcript, or one of its artifacts, as an MCP resource. */
export type ResourceRef =
  | { kind: 'messages'; spaceId: string; uri: string }
  | { kind: 'artifact'; spaceId: string; artifactId: string; uri: string };

export const messagesUri = (spaceId: string): string => `convene://space/${spaceId}/messages`;
export const artifactUri = (spaceId: string, artifactId: string): string =>
  `convene://space/${spaceId}/artifact/${artifactId}`;

/** The URI templates the server offers (resources/templates/list). */
export const resourceTemplates = [
  {
    uriTemplate: 'convene://space/{spaceId}/messages',
    name: 'space-messages',
    title: 'A space’s transcript',
    description:
      'The latest messages of a space (at most 500), oldest first, as JSON. Subscribe to hear of every new message.',
    mimeType: 'application/json',
  },
  {
    uriTemplate: 'convene://space/{spaceId}/artifact/{artifactId}',
    name: 'space-artifact',
    title: 'A shared document of a space',
    description: 'An artifact’s current markdown. Subscribe to hear of every write.',
    mimeType: 'text/markdown',
  },
] as const;

const URI_RE = /^convene:\/\/space\/([0-9a-f-]{36})\/(?:(messages)|artifact\/([0-9a-f-]{36}))$/i;

/** The resource a URI names; anything else is 400. */
export function parseResourceUri(uri: string): ResourceRef {
  const match = URI_RE.exec(uri);
  if (!match)
    throw new ValidationError(
      `unknown resource ${uri}: expected ${resourceTemplates.map((t) => t.uriTemplate).join(' or ')}`,
    );
  const spaceId = match[1]!.toLowerCase();
  if (match[2]) return { kind: 'messages', spaceId, uri: messagesUri(spaceId) };
  return {
    kind: 'artifact',
    spaceId,
    artifactId: match[3]!.toLowerCase(),
    uri: artifactUri(spaceId, match[3]!.toLowerCase()),
  };
}

export interface ResourceOptions {
  deps: Deps;
  key: string | undefined;
}

/** Authorizes a key for a resource: owner or participant key of its space (muted included). */
async function authorizeResource({ deps, key }: ResourceOptions, ref: ResourceRef) {
  const { space, caller } = await authorize(deps.db, deps.clock, {
    spaceId: ref.spaceId,
    key,
    allow: roles.member,
    whenClosed: 'unauthorized',
  });
  if (ref.kind === 'artifact') await findArtifact(deps.db, ref.spaceId, ref.artifactId);
  return { space, participant: caller.participant! };
}

export interface ResourceContent {
  uri: string;
  mimeType: string;
  text: string;
}

/**
 * A resource's content: the transcript's latest page (the last 500 messages, oldest first, with
 * the cursor to poll or wait from) as JSON, or an artifact's markdown. The cursor is the last
 * message's timestamp, or the space's creation time when there is none, as listMessages answers
 * without a timestamp.
 */
export async function readResource(options: ResourceOptions & { uri: string }): Promise<ResourceContent> {
  const ref = parseResourceUri(options.uri);
  const { space } = await authorizeResource(options, ref);
  const { db } = options.deps;
  if (ref.kind === 'artifact') {
    const row = await findArtifact(db, ref.spaceId, ref.artifactId);
    return { uri: ref.uri, mimeType: 'text/markdown', text: row.content };
  }
  const rows = rowsOf<MessageRow>(
    await db.execute(sql`
      select * from (
        select ${messageRowColumns}, m.created_at from messages m where m.space_id = ${ref.spaceId}
        order by m.event_seq desc limit ${limits.messagesPerPage}
      ) m order by m.created_at
    `),
  );
  const messages = rows.map(toMessageView);
  return {
    uri: ref.uri,
    mimeType: 'application/json',
    text: JSON.stringify({ messages, cursor: messages.at(-1)?.timestamp ?? formatMicros(space.createdAt) }),
  };
}

export interface ListedResource {
  uri: string;
  name: string;
  title: string;
  mimeType: string;
}

/** The open space a key is for, and whose key it is. */
export interface SpaceOfKey {
  spaceId: string;
  name: string;
  role: 'owner' | 'participant' | 'invitation';
}

/**
 * The open space a key belongs to (keys are hashed alone, so a key names its space): an MCP
 * connection configured with a key in its X-Private-Key header is told which space that is, as
 * every tool but create_space asks for the spaceId. Undefined for a key of nobody live, or of a
 * space closed or expired.
 */
export async function spaceOfKey({ deps, key }: ResourceOptions): Promise<SpaceOfKey | undefined> {
  if (!key) return undefined;
  const { db, clock } = deps;
  const hash = hashSecret(key);
  const [member] = await db
    .select({ isOwner: participants.isOwner, space: spaces })
    .from(participants)
    .innerJoin(spaces, eq(spaces.id, participants.spaceId))
    .where(and(eq(participants.keyHash, hash), inArray(participants.status, ['active', 'muted'])));
  const [invited] = member
    ? []
    : await db
        .select({ space: spaces })
        .from(invitations)
        .innerJoin(spaces, eq(spaces.id, invitations.spaceId))
        .where(eq(invitations.keyHash, hash));
  const found = member ?? invited;
  if (!found || isClosed(found.space, clock.now())) return undefined;
  const role = member ? (member.isOwner ? 'owner' : 'participant') : 'invitation';
  return { spaceId: found.space.id, name: found.space.name, role };
}

/**
 * The resources a key can read: its space's transcript and every artifact of it. A key is
 * scoped to one space, so the key alone says which; without a (live) member's key there is
 * nothing (an invitation key reads no messages).
 */
export async function listResources({ deps, key }: ResourceOptions): Promise<ListedResource[]> {
  const found = await spaceOfKey({ deps, key });
  if (!found || found.role === 'invitation') return [];
  const { db } = deps;
  const rows = await db
    .select({ id: artifacts.id, name: artifacts.name })
    .from(artifacts)
    .where(eq(artifacts.spaceId, found.spaceId))
    .orderBy(asc(artifacts.createdAt));
  return [
    {
      uri: messagesUri(found.spaceId),
      name: 'messages',
      title: `Messages of ${found.name}`,
      mimeType: 'application/json',
    },
    ...rows.map((row) => ({
      uri: artifactUri(found.spaceId, row.id),
      name: row.name,
      title: row.name,
      mimeType: 'text/markdown',
    })),
  ];
}

export interface SubscriptionOptions extends ResourceOptions {
  /** The MCP session (its Mcp-Session-Id), whose GET stream, on any node, will be notified. */
  sessionId: string;
  uri: string;
}

/**
 * Subscribes a session to a resource: the node holding the session's GET stream hears of it
 * (NOTIFY) and from then on sends `notifications/resources/updated` when it changes.
 */
export async function subscribeToResource(options: SubscriptionOptions): Promise<void> {
  const ref = parseResourceUri(options.uri);
  const { participant } = await authorizeResource(options, ref);
  const { db, clock } = options.deps;
  const sessionId = hashSecret(options.sessionId);
  await db.transaction(async (tx) => {
    await tx
      .insert(mcpSubscriptions)
      .values({
        sessionId,
        uri: ref.uri,
        spaceId: ref.spaceId,
        participantId: participant.id,
        // The space's last event as this statement sees it: the stream's catch-up tells only of
        // what came after (a change of before is what the client reads anyway).
        fromSeq: sql`(select event_seq from spaces where id = ${ref.spaceId})`,
        createdAt: clock.now(),
      })
      .onConflictDoNothing();
    await tx.execute(sql`select pg_notify(${MCP_SESSIONS_CHANNEL}, ${sessionId})`);
  });
}

export async function unsubscribeFromResource(options: Omit<SubscriptionOptions, 'key'>): Promise<void> {
  const ref = parseResourceUri(options.uri);
  const sessionId = hashSecret(options.sessionId);
  await options.deps.db.transaction(async (tx) => {
    await tx
      .delete(mcpSubscriptions)
      .where(and(eq(mcpSubscriptions.sessionId, sessionId), eq(mcpSubscriptions.uri, ref.uri)));
    await tx.execute(sql`select pg_notify(${MCP_SESSIONS_CHANNEL}, ${sessionId})`);
  });
}

export interface SessionSubscription {
  uri: string;
  spaceId: string;
  participantId: string;
  fromSeq: number;
}

/** A session's subscriptions, by the session's hash (what the node streaming to it reloads). */
export async function loadSubscriptions({
  deps,
  sessionHash,
}: {
  deps: Deps;
  sessionHash: string;
}): Promise<SessionSubscription[]> {
  return deps.db
    .select({
      uri: mcpSubscriptions.uri,
      spaceId: mcpSubscriptions.spaceId,
      participantId: mcpSubscriptions.participantId,
      fromSeq: mcpSubscriptions.fromSeq,
    })
    .from(mcpSubscriptions)
    .where(eq(mcpSubscriptions.sessionId, sessionHash));
}

/** Drops a participant's subscriptions in a space (they left, were kicked, or it closed). */
export async function dropSubscriptions({
  deps,
  sessionHash,
  spaceId,
}: {
  deps: Deps;
  sessionHash: string;
  spaceId: string;
}): Promise<void> {
  await deps.db
    .delete(mcpSubscriptions)
    .where(and(eq(mcpSubscriptions.sessionId, sessionHash), eq(mcpSubscriptions.spaceId, spaceId)));
}

/**
 * Which of a space's subscriptions changed after they were made: the transcript when a message
 * came since, an artifact when it was written since. A stream that starts listening to a space
 * asks once, after it listens, so a change in between is told rather than lost.
 */
export async function resourcesChangedSince({
  deps,
  spaceId,
  subscriptions,
}: {
  deps: Deps;
  spaceId: string;
  subscriptions: readonly Pick<SessionSubscription, 'uri' | 'fromSeq'>[];
}): Promise<string[]> {
  const changed: string[] = [];
  for (const sub of subscriptions) {
    const ref = parseResourceUri(sub.uri);
    const [row] = rowsOf<{ changed: boolean }>(
      await deps.db.execute(
        ref.kind === 'messages'
          ? sql`select exists (select 1 from messages m
              where m.space_id = ${spaceId} and m.event_seq > ${sub.fromSeq}) as changed`
          : sql`select exists (select 1 from space_events e
              where e.space_id = ${spaceId} and e.seq > ${sub.fromSeq} and e.kind = 'artifact-updated'
                and e.data->>'id' = ${ref.artifactId}) as changed`,
      ),
    );
    if (row?.changed) changed.push(sub.uri);
  }
  return changed;
}
