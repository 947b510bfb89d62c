import { sql } from 'drizzle-orm';
import { rowsOf } from '../db/migrate';
import type { Executor } from '../db/types';
import { UnavailableError } from '../errors';
import type { SecretBox } from '../secrets';

/**
 * The settings row naming the SECRET every value of the deployment is sealed under: the
 * fingerprint of its SecretBox, written by the node that started with it (adoptSecret).
 */
export const SECRET_FINGERPRINT_SETTING = 'sealing-fingerprint';

/** What the operator is told when a node finds its SECRET replaced under it. */
const STALE =
  'SECRET changed: a node started with another SECRET (and PREVIOUS_SECRET set to this node’s) and sealed everything again under it. This node still runs with the previous one: it refuses (503) every request that seals or opens a key until it is restarted with the new SECRET (PREVIOUS_SECRET set to the one it has now)';

/** How often a stale node says so, at most. */
const STALE_SAID_EVERY_MS = 60_000;

export interface SealerOptions {
  /**
   * PREVIOUS_SECRET's box, after a change of SECRET: a value still sealed under it (by a node that
   * ran with it meanwhile) opens, and is sealed again under SECRET where its use case says.
   */
  previous?: SecretBox | undefined;
  /** Told, at most once a minute, when this node's SECRET is no longer the deployment's. */
  onStale?: ((message: string) => void) | undefined;
}

/** Writes `fresh` (the value sealed again under SECRET) where the value opened is stored. */
export type Reseal = (ex: Executor, fresh: string) => Promise<unknown>;

/**
 * Seals and opens the secrets that must be handed out again (the port `deps.box`), under the
 * node's SECRET, as long as it is the deployment's. A node left running with the old SECRET while
 * another starts with a new one (a rolling change) would seal values no other node can open: so
 * each seal checks, in the transaction of the row it is for, that the deployment's SECRET is still
 * this node's, holding the fingerprint row (FOR KEY SHARE) until that transaction ends. A change of
 * SECRET takes the row FOR UPDATE before it reseals anything, so a value is either committed before
 * the change begins (and resealed by it) or refused, 503: nothing a client was told was stored is
 * ever sealed under a SECRET the deployment has left. A value that does not open is answered 503
 * too when the reason is that this node's SECRET is stale (500 otherwise: it is damaged).
 */
export class Sealer {
  private staleSaidAt = Number.NEGATIVE_INFINITY;

  constructor(
    /** This node's SECRET. */
    readonly current: SecretBox,
    private readonly options: SealerOptions = {},
  ) {}

  /** The fingerprint of this node's SECRET (SECRET_FINGERPRINT_SETTING holds the deployment's). */
  get fingerprint(): string {
    return this.current.fingerprint;
  }

  /** Tells the operator of a stale SECRET from now on (the logger exists after the ports). */
  set onStale(onStale: ((message: string) => void) | undefined) {
    this.options.onStale = onStale;
  }

  /**
   * `plaintext` sealed under SECRET, for a row `ex` (a transaction) writes; refused (503) when the
   * deployment's SECRET is no longer this node's.
   */
  async seal(ex: Executor, plaintext: string): Promise<string> {
    if (await this.isStale(ex, sql` for key share`)) throw this.stale();
    return this.current.encrypt(plaintext);
  }

  /**
   * A sealed value, opened. One sealed under PREVIOUS_SECRET opens with it, and when `reseal` is
   * given it is sealed again under SECRET and handed to it to store (in a savepoint: a failure
   * there leaves the value as it was, still readable, and the request goes on).
   */
  async open(ex: Executor, sealed: string, reseal?: Reseal): Promise<string> {
    try {
      return this.current.decrypt(sealed);
    } catch (error) {
      const plaintext = this.openPrevious(sealed);
      if (plaintext !== undefined) {
        if (reseal)
          await ex
            .transaction(async (sp) => reseal(sp, await this.seal(sp, plaintext)))
            .catch(() => {
              // Left under PREVIOUS_SECRET: it opens as it did, and the next start reseals it.
            });
        return plaintext;
      }
      if (await this.isStale(ex)) throw this.stale();
      throw error;
    }
  }

  private openPrevious(sealed: string): string | undefined {
    if (!this.options.previous) return undefined;
    try {
      return this.options.previous.decrypt(sealed);
    } catch {
      return undefined;
    }
  }

  /**
   * Whether the deployment's SECRET is no longer this node's, its row read with `lock`. No row: a
   * database no node of this version has started on yet (tests that compose their own ports).
   */
  private async isStale(ex: Executor, lock = sql``): Promise<boolean> {
    const [row] = rowsOf<{ value: string }>(
      await ex.execute(sql`select value from settings where key = ${SECRET_FINGERPRINT_SETTING}${lock}`),
    );
    return row !== undefined && row.value !== this.current.fingerprint;
  }

  private stale(): UnavailableError {
    const now = Date.now();
    if (now - this.staleSaidAt >= STALE_SAID_EVERY_MS) {
      this.staleSaidAt = now;
      this.options.onStale?.(STALE);
    }
    return new UnavailableError(
      'this server node runs with settings the deployment has changed since, and cannot serve this request until it is restarted; retry shortly',
    );
  }
}
