import { and, eq, inArray, lt, sql } from 'drizzle-orm';
import { LOCK_NOT_AVAILABLE, sqlState } from '../db/pg-error';
import { idempotencyRecords } from '../db/schema/infra';
import type { Db, Executor } from '../db/types';
import { ConflictError } from '../errors';
import type { Sealer } from './sealer';

/** A response worth replaying: status, the headers that describe it, and its body. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * A finished write's record: the response to replay, or what its own statement recorded instead
 * (`outcome`, rendered into a response by whoever knows the operation: see sendMessage).
 */
export interface IdempotencyRecord {
  requestHash: string;
  response?: StoredResponse;
  outcome?: unknown;
}

/** Which write a record is for, and until when it is replayed. */
export interface IdempotencyGuard {
  /** Hash of method, path, credential and Idempotency-Key. */
  scope: string;
  /** Hash of what was sent, to tell a retry from a reuse of the key (422). */
  requestHash: string;
  now: Date;
  /** 24 h after the write. */
  expiresAt: Date;
}

/**
 * A duplicate waited `waitMs` for the first request with its Idempotency-Key, on another node (or
 * in another transaction), and that one is still running.
 */
export class IdempotencyBusyError extends ConflictError {
  constructor() {
    super(
      'a request with this Idempotency-Key is still being processed; retry it later',
      {},
      'duplicate_request',
    );
  }
}

/**
 * Records of writes made with an Idempotency-Key, completed in the transaction of the write they
 * guard. `claim` and `complete` run inside that transaction: the record commits exactly when the
 * write does, so a crash or an outage can never leave a write without its record (a retry would
 * run it twice) nor a record without its write (a retry would wait for nothing).
 */
export interface IdempotencyStore {
  /** The live record of `scope` at `now`, if any. */
  get(scope: string, now: Date): Promise<IdempotencyRecord | undefined>;
  /**
   * Inside the write's transaction, before the write: takes `scope` for it. While another
   * transaction holds the scope (a duplicate still running, on any node) this waits for it to
   * end, at most `waitMs` (then IdempotencyBusyError). Returns the live record when there is one
   * (nothing to run: replay it), else undefined (the scope is this transaction's).
   */
  claim(tx: Executor, guard: IdempotencyGuard, waitMs: number): Promise<IdempotencyRecord | undefined>;
  /** In the same transaction, after the write: the response its record replays. */
  complete(tx: Executor, scope: string, response: StoredResponse): Promise<void>;
  /**
   * Outside any transaction: the answer to a write that changed nothing (a refusal, 4xx), kept
   * unless a record already exists. Nothing depends on it being atomic: nothing was written.
   * Returns that live record when there is one: a duplicate that came first (on another node, an
   * instant earlier) was answered, and its answer is the one to give.
   */
  recordRefusal(guard: IdempotencyGuard, response: StoredResponse): Promise<IdempotencyRecord | undefined>;
  /** Deletes up to `limit` records expired before `now`; returns how many. */
  sweep(now: Date, limit?: number): Promise<number>;
}

/**
 * Records in the database, shared by every node. Bodies are sealed with the server's SecretBox:
 * a stored response may carry a secret shown once (a participant key, a `usr_` token), and
 * secrets are never kept in plaintext at rest.
 */
export class SqlIdempotencyStore implements IdempotencyStore {
  constructor(
    private readonly db: Db,
    private readonly box: Sealer,
  ) {}

  get(scope: string, now: Date): Promise<IdempotencyRecord | undefined> {
    return this.read(this.db, scope, now);
  }

  async claim(tx: Executor, guard: IdempotencyGuard, waitMs: number): Promise<IdempotencyRecord | undefined> {
    // A duplicate's uncommitted row makes this INSERT wait for its transaction; bound the wait.
    await tx.execute(sql.raw(`set local lock_timeout = ${Math.max(1, Math.floor(waitMs))}`));
    let rows: { scope: string }[];
    try {
      rows = await tx
        .insert(idempotencyRecords)
        .values(this.placeholder(guard))
        .onConflictDoUpdate({
          target: idempotencyRecords.scope,
          set: (({ scope: _scope, ...rest }) => rest)(this.placeholder(guard)),
          // A record past its 24 h is forgotten: the key is free again.
          setWhere: sql`${idempotencyRecords.expiresAt} <= ${guard.now.toISOString()}::timestamptz`,
        })
        .returning({ scope: idempotencyRecords.scope });
    } catch (error) {
      if (sqlState(error) === LOCK_NOT_AVAILABLE) throw new IdempotencyBusyError();
      throw error;
    }
    await tx.execute(sql`set local lock_timeout to default`);
    if (rows.length === 1) return undefined;
    const record = await this.read(tx, guard.scope, guard.now);
    // The row exists and is not expired, or the insert would have taken it over.
    if (!record) throw new Error('an idempotency record vanished while it was locked');
    return record;
  }

  async complete(tx: Executor, scope: string, response: StoredResponse): Promise<void> {
    await tx
      .update(idempotencyRecords)
      .set({
        status: response.status,
        headers: response.headers,
        body: await this.box.seal(tx, response.body),
      })
      .where(eq(idempotencyRecords.scope, scope));
  }

  async recordRefusal(
    guard: IdempotencyGuard,
    response: StoredResponse,
  ): Promise<IdempotencyRecord | undefined> {
    // A transaction of its own: the seal is checked in the transaction that stores it. A
    // duplicate's uncommitted record makes the insert wait for it, so one that commits is read.
    return this.db.transaction(async (tx) => {
      const stored = await tx
        .insert(idempotencyRecords)
        .values({
          ...this.placeholder(guard),
          status: response.status,
          headers: response.headers,
          body: await this.box.seal(tx, response.body),
        })
        .onConflictDoNothing()
        .returning({ scope: idempotencyRecords.scope });
      return stored.length === 1 ? undefined : this.read(tx, guard.scope, guard.now);
    });
  }

  async sweep(now: Date, limit = 1000): Promise<number> {
    // Bounded batches through the expiry index, so a sweep never holds many row locks at once;
    // rows another transaction holds (another node's sweep, a claim taking over an expired record)
    // are left to a later turn instead of waited for.
    const expired = this.db
      .select({ scope: idempotencyRecords.scope })
      .from(idempotencyRecords)
      .where(lt(idempotencyRecords.expiresAt, now))
      .limit(limit)
      .for('update', { skipLocked: true });
    const deleted = await this.db
      .delete(idempotencyRecords)
      .where(inArray(idempotencyRecords.scope, expired))
      .returning({ scope: idempotencyRecords.scope });
    return deleted.length;
  }

  /** The row a claim writes; `complete` fills in the response before it commits. */
  private placeholder(guard: IdempotencyGuard) {
    return {
      scope: guard.scope,
      requestHash: guard.requestHash,
      state: 'done' as const,
      status: null,
      headers: null,
      body: null,
      outcome: null,
      createdAt: guard.now,
      expiresAt: guard.expiresAt,
    };
  }

  /** A stored body, opened; one still sealed under PREVIOUS_SECRET is sealed again in place. */
  private openBody(ex: Executor, scope: string, body: string): Promise<string> {
    return this.box.open(ex, body, (sp, fresh) =>
      sp
        .update(idempotencyRecords)
        .set({ body: fresh })
        .where(and(eq(idempotencyRecords.scope, scope), eq(idempotencyRecords.body, body))),
    );
  }

  private async read(ex: Executor, scope: string, now: Date): Promise<IdempotencyRecord | undefined> {
    const [row] = await ex
      .select()
      .from(idempotencyRecords)
      .where(eq(idempotencyRecords.scope, scope))
      .limit(1);
    if (!row || row.expiresAt.getTime() <= now.getTime()) return undefined;
    if (row.outcome !== null && row.outcome !== undefined)
      return { requestHash: row.requestHash, outcome: row.outcome };
    return {
      requestHash: row.requestHash,
      response: {
        status: row.status ?? 200,
        headers: (row.headers ?? {}) as Record<string, string>,
        body: row.body ? await this.openBody(ex, scope, row.body) : '',
      },
    };
  }
}
