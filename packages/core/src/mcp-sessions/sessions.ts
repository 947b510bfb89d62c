import { and, eq, gt, inArray, lte, sql } from 'drizzle-orm';
import { mcpSessions, mcpSubscriptions } from '../db/schema';
import type { Executor } from '../db/types';
import type { Deps } from '../deps';
import { hashSecret, mintMcpSessionId } from '../secrets';

/**
 * The channel a node LISTENs on for what concerns the sessions it serves (McpSessionNotice): a
 * session's subscriptions changed (payload: the session's hash), the session ended (`ended
 * <hash>`), or a call of the session was cancelled (`cancelled <hash> <request id as JSON>`).
 */
export const MCP_SESSIONS_CHANNEL = 'convene_mcp';

/** What a notice on MCP_SESSIONS_CHANNEL says of the session whose hash it names. */
export type McpSessionNotice =
  | { kind: 'subscriptions'; hash: string }
  | { kind: 'ended'; hash: string }
  | { kind: 'cancelled'; hash: string; requestId: string | number };

/** A notice as its payload. */
export function mcpSessionNoticePayload(notice: McpSessionNotice): string {
  if (notice.kind === 'subscriptions') return notice.hash;
  if (notice.kind === 'ended') return `ended ${notice.hash}`;
  return `cancelled ${notice.hash} ${JSON.stringify(notice.requestId)}`;
}

/** A payload as its notice; undefined for one this build does not know. */
export function parseMcpSessionNotice(payload: string): McpSessionNotice | undefined {
  const [kind, hash, requestId] = payload.split(' ', 3);
  if (hash === undefined) return kind ? { kind: 'subscriptions', hash: kind } : undefined;
  if (kind === 'ended') return { kind, hash };
  if (kind !== 'cancelled' || requestId === undefined) return undefined;
  try {
    const id: unknown = JSON.parse(payload.slice(kind.length + hash.length + 2));
    return typeof id === 'string' || typeof id === 'number' ? { kind, hash, requestId: id } : undefined;
  } catch {
    return undefined;
  }
}

/** The longest request id whose cancellation goes to the other nodes (NOTIFY payloads are small). */
const MAX_CANCELLED_ID_CHARS = 200;

/**
 * Tells every node that a call of the session was cancelled (notifications/cancelled): the node
 * running it stops it. The session id itself is the proof that the caller may.
 */
export async function cancelMcpCall({
  deps,
  sessionId,
  requestId,
}: McpSessionOptions & { sessionId: string; requestId: string | number }): Promise<void> {
  if (JSON.stringify(requestId).length > MAX_CANCELLED_ID_CHARS) return;
  const payload = mcpSessionNoticePayload({ kind: 'cancelled', hash: hashSecret(sessionId), requestId });
  await deps.db.execute(sql`select pg_notify(${MCP_SESSIONS_CHANNEL}, ${payload})`);
}

/** A session lives this long after its last use. */
export const MCP_SESSION_TTL_MS = 24 * 60 * 60 * 1000;

export interface McpSessionOptions {
  deps: Deps;
}

/** Starts an MCP session (on `initialize`): its id is returned once and stored as a hash. */
export async function createMcpSession({ deps }: McpSessionOptions): Promise<string> {
  const { db, clock } = deps;
  const id = mintMcpSessionId();
  const now = clock.now();
  await db.insert(mcpSessions).values({
    id: hashSecret(id),
    createdAt: now,
    expiresAt: new Date(now.getTime() + MCP_SESSION_TTL_MS),
  });
  return id;
}

/** How stale a session's expiry may get before a use renews it (one write an hour, not one a request). */
const RENEW_AFTER_MS = 60 * 60 * 1000;

/**
 * Whether a session id names a live session, on whichever node started it: read on every use,
 * so a session ended on one node is unknown on all of them at once. Using it keeps it alive for
 * another day (renewed at most once an hour).
 */
export async function touchMcpSession({
  deps,
  sessionId,
}: McpSessionOptions & { sessionId: string }): Promise<boolean> {
  const { db, clock } = deps;
  const now = clock.now();
  const id = hashSecret(sessionId);
  const [row] = await db
    .select({ expiresAt: mcpSessions.expiresAt })
    .from(mcpSessions)
    .where(and(eq(mcpSessions.id, id), gt(mcpSessions.expiresAt, now)));
  if (!row) return false;
  const renewed = new Date(now.getTime() + MCP_SESSION_TTL_MS);
  if (renewed.getTime() - row.expiresAt.getTime() > RENEW_AFTER_MS)
    await db
      .update(mcpSessions)
      .set({ expiresAt: sql`greatest(${mcpSessions.expiresAt}, ${renewed.toISOString()}::timestamptz)` })
      .where(eq(mcpSessions.id, id));
  return true;
}

/** Ends a session (DELETE /mcp): its subscriptions and its notification streams go with it. */
export async function deleteMcpSession({
  deps,
  sessionId,
}: McpSessionOptions & { sessionId: string }): Promise<boolean> {
  const hash = hashSecret(sessionId);
  return deps.db.transaction(async (tx) => {
    await tx.delete(mcpSubscriptions).where(eq(mcpSubscriptions.sessionId, hash));
    const deleted = await tx
      .delete(mcpSessions)
      .where(eq(mcpSessions.id, hash))
      .returning({ id: mcpSessions.id });
    await notifyEnded(tx, [hash]);
    return deleted.length > 0;
  });
}

/**
 * Forgets up to `limit` sessions unused for a day, with their subscriptions and notification
 * streams; returns how many.
 */
export async function sweepMcpSessions({
  deps,
  limit = 1000,
}: McpSessionOptions & { limit?: number }): Promise<number> {
  const { db, clock } = deps;
  return db.transaction(async (tx) => {
    const expired = await tx
      .select({ id: mcpSessions.id })
      .from(mcpSessions)
      .where(lte(mcpSessions.expiresAt, clock.now()))
      .limit(limit);
    if (expired.length === 0) return 0;
    const ids = expired.map((row) => row.id);
    await tx.delete(mcpSubscriptions).where(inArray(mcpSubscriptions.sessionId, ids));
    await tx.delete(mcpSessions).where(inArray(mcpSessions.id, ids));
    // A stream alone renews nothing: a forgotten session's streams end as an ended one's do.
    await notifyEnded(tx, ids);
    return ids.length;
  });
}

/** Tells every node that these sessions ended: their notification streams and calls stop. */
async function notifyEnded(tx: Executor, hashes: readonly string[]): Promise<void> {
  const ended = JSON.stringify(hashes.map((hash) => mcpSessionNoticePayload({ kind: 'ended', hash })));
  await tx.execute(
    sql`select pg_notify(${MCP_SESSIONS_CHANNEL}, notice) from json_array_elements_text(${ended}::json) as notice`,
  );
}
