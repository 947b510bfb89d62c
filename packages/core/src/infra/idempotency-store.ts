import { and, eq, inArray, lt, sql } from 'drizzle-orm';
import { idempotencyRecords } from '../db/schema/infra';
import type { Db } from '../db/types';
import type { SecretBox } from '../secrets';

/** A response worth replaying: status, the headers that describe it, and its body. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type IdempotencyRecord =
  | { state: 'running'; requestHash: string }
  | { state: 'done'; requestHash: string; response: StoredResponse };

export interface ClaimInput {
  /** Hash of method, path, credential and Idempotency-Key. */
  scope: string;
  /** Hash of what was sent, to tell a retry from a reuse of the key (422). */
  requestHash: string;
  now: Date;
  /** Until when the claim holds if the claimant never completes or releases it (a dead node). */
  leaseUntil: Date;
}

/**
 * Records of writes made with an Idempotency-Key. `claim` is atomic across nodes: exactly one of
 * concurrent duplicates gets `true` and runs; the others read the record until it is done.
 */
export interface IdempotencyStore {
  /** True when the caller now owns `scope`: no record existed, or only an expired one. */
  claim(input: ClaimInput): Promise<boolean>;
  /** The live record of `scope` at `now`, if any. */
  get(scope: string, now: Date): Promise<IdempotencyRecord | undefined>;
  /** Stores the response of a claimed scope, kept until `expiresAt`. */
  complete(scope: string, response: StoredResponse, expiresAt: Date): Promise<void>;
  /** Drops a claim that produced nothing to replay (a 5xx, an aborted request), so a retry runs again. */
  release(scope: string): Promise<void>;
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
    private readonly box: SecretBox,
  ) {}

  async claim({ scope, requestHash, now, leaseUntil }: ClaimInput): Promise<boolean> {
    // INSERT … ON CONFLICT: a live record blocks the claim; an expired one (a finished record
    // past 24 h, or the claim of a node that died mid-request) is taken over in the same statement.
    const rows = await this.db
      .insert(idempotencyRecords)
      .values({ scope, requestHash, state: 'running', createdAt: now, expiresAt: leaseUntil })
      .onConflictDoUpdate({
        target: idempotencyRecords.scope,
        set: {
          requestHash,
          state: 'running',
          status: null,
          headers: null,
          body: null,
          createdAt: now,
          expiresAt: leaseUntil,
        },
        setWhere: sql`${idempotencyRecords.expiresAt} <= ${now.toISOString()}::timestamptz`,
      })
      .returning({ scope: idempotencyRecords.scope });
    return rows.length === 1;
  }

  async get(scope: string, now: Date): Promise<IdempotencyRecord | undefined> {
    const [row] = await this.db
      .select()
      .from(idempotencyRecords)
      .where(eq(idempotencyRecords.scope, scope))
      .limit(1);
    if (!row || row.expiresAt.getTime() <= now.getTime()) return undefined;
    if (row.state === 'running') return { state: 'running', requestHash: row.requestHash };
    return {
      state: 'done',
      requestHash: row.requestHash,
      response: {
        status: row.status ?? 200,
        headers: (row.headers ?? {}) as Record<string, string>,
        body: row.body ? this.box.decrypt(row.body) : '',
      },
    };
  }

  async complete(scope: string, response: StoredResponse, expiresAt: Date): Promise<void> {
    await this.db
      .update(idempotencyRecords)
      .set({
        state: 'done',
        status: response.status,
        headers: response.headers,
        body: this.box.encrypt(response.body),
        expiresAt,
      })
      .where(and(eq(idempotencyRecords.scope, scope), eq(idempotencyRecords.state, 'running')));
  }

  async release(scope: string): Promise<void> {
    await this.db
      .delete(idempotencyRecords)
      .where(and(eq(idempotencyRecords.scope, scope), eq(idempotencyRecords.state, 'running')));
  }

  async sweep(now: Date, limit = 1000): Promise<number> {
    // Bounded batches through the expiry index, so a sweep never holds many row locks at once.
    const expired = this.db
      .select({ scope: idempotencyRecords.scope })
      .from(idempotencyRecords)
      .where(lt(idempotencyRecords.expiresAt, now))
      .limit(limit);
    const deleted = await this.db
      .delete(idempotencyRecords)
      .where(inArray(idempotencyRecords.scope, expired))
      .returning({ scope: idempotencyRecords.scope });
    return deleted.length;
  }
}

/** Records in this process, for tests of the policy without a database. */
export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly records = new Map<string, IdempotencyRecord & { expiresAt: number }>();

  async claim({ scope, requestHash, now, leaseUntil }: ClaimInput): Promise<boolean> {
    const existing = this.records.get(scope);
    if (existing && existing.expiresAt > now.getTime()) return false;
    this.records.set(scope, { state: 'running', requestHash, expiresAt: leaseUntil.getTime() });
    return true;
  }

  async get(scope: string, now: Date): Promise<IdempotencyRecord | undefined> {
    const record = this.records.get(scope);
    if (!record || record.expiresAt <= now.getTime()) return undefined;
    const { expiresAt: _expiresAt, ...rest } = record;
    return rest;
  }

  async complete(scope: string, response: StoredResponse, expiresAt: Date): Promise<void> {
    const record = this.records.get(scope);
    if (record?.state !== 'running') return;
    this.records.set(scope, {
      state: 'done',
      requestHash: record.requestHash,
      response,
      expiresAt: expiresAt.getTime(),
    });
  }

  async release(scope: string): Promise<void> {
    if (this.records.get(scope)?.state === 'running') this.records.delete(scope);
  }

  async sweep(now: Date, limit = Number.POSITIVE_INFINITY): Promise<number> {
    let n = 0;
    for (const [scope, record] of this.records) {
      if (n >= limit) break;
      if (record.expiresAt < now.getTime()) {
        this.records.delete(scope);
        n += 1;
      }
    }
    return n;
  }
}
