import { APIPromise, type WithResponse } from './api-promise';
import { AbortError, ConnectionError, ConveneError, hasStatus, LockedError, UnlockError } from './errors';
import type {
  ArtifactList,
  ArtifactVersionList,
  ArtifactView,
  CreateArtifactParams,
  LockResult,
  WriteArtifactParams,
} from './generated';
import {
  backoffMs,
  linkedController,
  retryableStatus,
  setField,
  showAs,
  sleep,
  timerMs,
  uuid4,
} from './internal';
import { SpaceResource } from './space-resource';
import { type RequestOptions, retryDelayMs } from './transport';

export interface CreateArtifactOptions extends Omit<CreateArtifactParams, 'type'> {
  /** The only type there is. */
  type?: 'markdown' | undefined;
}

/** The request options of a lock call, and how long to wait for a lock someone else holds. */
export interface LockOptions extends RequestOptions {
  /**
   * How long to wait for the lock, at most, in ms, while someone else holds it (default 0: a
   * LockedError at once). The lock is asked for again after a pause that starts at about 200 ms
   * and grows to 2 s (a waiting agent makes at most about 40 calls a minute), and never lasts past
   * the lock's `lockExpiresAt` (a holder gone away is replaced soon after its lock lapses). Each
   * attempt is a write of its own, with its own Idempotency-Key (`idempotencyKey` is the first's).
   * When the time is up, the last attempt's LockedError is thrown (`code` `lock_held`, `lockedBy`
   * the holder); `signal` ends the wait with an AbortError. Only a lock someone holds is waited
   * for: any other error is thrown as without it. `Infinity` waits until the signal aborts.
   */
  waitMs?: number | undefined;
}

/**
 * The request options of each call `withLock` makes. An `idempotencyKey` is the lock's only (and
 * asks again, with it, whether a lock call that got no answer took the lock): each heartbeat and
 * the unlock is a write of its own, with its own key. `signal` ends the whole operation: before
 * the lock is taken, nothing is left locked (a lock call it ended while out is asked about and
 * released, as the unlock is, in 1 + `maxRetries` attempts); while the callback runs, `doc.signal`
 * aborts and `doc.write` throws AbortError, and the lock is released all the same. It also says
 * how long you are willing to wait for that release: the unlock is always tried as any call is
 * (1 + `maxRetries` attempts), and beyond those only until the signal aborts (an UnlockError).
 * `waitMs` waits for a lock held elsewhere, or by another withLock of the key in this process.
 */
export interface WithLockOptions extends LockOptions {
  /**
   * How often the lock is refreshed while the callback runs, in ms, at least 500. Default: a
   * third of the lock's lifetime as the server gave it, at most 30 s: a heartbeat is also what
   * tells the callback (`doc.signal`) that the space closed or expired, or the participant was
   * removed.
   */
  heartbeatIntervalMs?: number | undefined;
}

/**
 * The artifact handed to a `withLock` callback: its content as read under the lock, and `write`,
 * which saves new content as the next version.
 */
export class LockedArtifact {
  declare private current: ArtifactView;

  /** @internal */
  constructor(
    private readonly artifacts: Artifacts,
    artifact: ArtifactView,
    private readonly lease: Lease,
    /**
     * Aborted if the lock is lost while the callback runs (a heartbeat answered 423), or the key
     * or its space ended (a heartbeat answered 401: within 30 s by default), or when the `signal`
     * given to withLock aborts.
     */
    readonly signal: AbortSignal,
    private readonly callerSignal: AbortSignal | undefined,
  ) {
    this.current = artifact;
    showAs(LockedArtifact, 'LockedArtifact');
  }

  /** The artifact's id. */
  get id(): string {
    return this.current.id;
  }
  /** The artifact as last read or written under this lock. */
  get artifact(): ArtifactView {
    return this.current;
  }
  /** The markdown as last read or written under this lock: what the next `write` replaces. */
  get content(): string {
    return this.current.content;
  }
  /** The version `content` is (the next `write` is based on it, and makes the next one). */
  get version(): number {
    return this.current.version;
  }
  /** When the lock lapses unless refreshed (the heartbeat refreshes it). */
  get lockExpiresAt(): string {
    return this.lease.expiresAt;
  }

  /** The artifact's id, version and lock, never the key it is written with: what `JSON.stringify` shows. */
  toJSON(): { id: string; version: number; lockExpiresAt: string } {
    return { id: this.id, version: this.version, lockExpiresAt: this.lockExpiresAt };
  }

  /**
   * Saves `content` as the next version (and refreshes the lock). After the lock was lost it is
   * refused as the server refuses it: a LockedError (`lockedBy` the new holder, if any). It is
   * based on the version this document holds (`baseVersion`), so a write made meanwhile with the
   * same key (another process of the same participant, whose lock is the same lock) is a
   * ConflictError rather than overwritten.
   *
   * `options` are a write's request options. A write whose answer was lost (a ConnectionError
   * with `mayHaveRun`) is sent again with `{ idempotencyKey: error.idempotencyKey }`: the server
   * replays it if it ran, and this document moves on to the version it made. Or `reload()`.
   */
  async write(
    content: string,
    params: Omit<WriteArtifactParams, 'content'> = {},
    options: RequestOptions = {},
  ): Promise<ArtifactView> {
    // Not sent with `signal`: once the lock is lost that would only say 'aborted', where the
    // server's 423 says who holds the lock now. The caller's own signals, though, end it.
    const { controller, release } = linkedController(this.callerSignal, options.signal);
    const sent = Date.now();
    try {
      this.current = await this.artifacts.write(
        this.id,
        content,
        { baseVersion: this.current.version, ...params },
        { ...options, signal: this.callerSignal || options.signal ? controller.signal : undefined },
      );
    } catch (error) {
      return await this.refused(error, this.version);
    } finally {
      release();
      this.lease.settled();
    }
    this.lease.refreshed(sent, this.current.lockExpiresAt);
    return this.current;
  }

  /**
   * Reads the artifact again, under the lock: its current version and content (after a write
   * whose answer was lost, or one made with the same key elsewhere), which the next `write` is
   * then based on. It does not refresh the lock. A read that finds the lock no longer this key's
   * (someone else holds it, or nobody: it lapsed or was released) holds what it read all the same,
   * and throws the LockedError a write would, once `signal` has aborted with it: `lockedBy` the
   * holder, if any, and who saved since (`version`, `updatedBy`).
   */
  async reload(options?: RequestOptions): Promise<ArtifactView> {
    const base = this.version;
    const now = await this.artifacts.get(this.id, {
      ...options,
      signal: options?.signal ?? this.callerSignal,
    });
    this.current = now;
    // Not this key's any more: the server's 423 says who holds it, as for a write (a heartbeat,
    // which refreshes only a lock still this key's: a request on this path only).
    if (now.lockedBy !== this.lease.holder)
      await this.artifacts.heartbeat(this.id, options).catch((error) => this.refused(error, base, now));
    return now;
  }

  /**
   * Throws `error`, the refusal of a call made under the lock. Not ours any more (taken, or the
   * key ended): no unlock may follow, which from the space's owner would release whoever holds it
   * now; and a LockedError says who saved since version `base`, from `now`, the artifact as read
   * after it (read here when not given: a request on this path only; one that fails says nothing).
   */
  private async refused(error: unknown, base: number, now?: ArtifactView): Promise<never> {
    if (hasStatus(error, 423, 401)) this.lease.lost(error as ConveneError);
    const read =
      error instanceof LockedError && (now ?? (await this.artifacts.get(this.id).catch(() => undefined)));
    if (read) {
      const { version, updatedBy } = read;
      setField(setField(error, 'version', version), 'updatedBy', updatedBy);
      error.message += `; ${version > base ? `${updatedBy} saved version ${version}` : 'nobody saved'} since version ${base}`;
    }
    throw error;
  }
}

/**
 * The lock a LockedArtifact is written under, as its withLock keeps it: out of the callback's
 * reach (a field of the document would be one assignment away from stopping its heartbeat).
 */
interface Lease {
  /** The participant holding it: this key's. */
  readonly holder: string;
  /** When the lock lapses unless refreshed. */
  readonly expiresAt: string;
  /** A request sent at `sent` refreshed the lock (until `expiresAt`, when the answer said). */
  refreshed(sent: number, expiresAt?: string): void;
  /** A request that may have refreshed the lock has ended, however. */
  settled(): void;
  /** A write or a reload said the lock is no longer this key's. */
  lost(error: ConveneError): void;
}

/** The artifacts of one space: markdown documents with an exclusive edit lock and a history. */
export class Artifacts extends SpaceResource {
  /** @internal */
  constructor(...args: ConstructorParameters<typeof SpaceResource>) {
    super(...args);
    showAs(Artifacts, 'Artifacts');
  }

  /** Creates a markdown artifact at version 1, unlocked. */
  create(params: CreateArtifactOptions, options?: RequestOptions): APIPromise<ArtifactView> {
    return this.call('createArtifact', {}, { ...params, type: params.type ?? 'markdown' }, options);
  }

  /**
   * Every artifact of the space, oldest first, with its content while the content before it stays
   * under 4 MiB; after that with `contentOmitted: true` and an empty `content` (`get` reads it).
   */
  list(options?: RequestOptions): APIPromise<ArtifactList> {
    return this.call('listArtifacts', {}, undefined, options);
  }

  /** The artifact: its content, version, and lock (`lockedBy`, `lockExpiresAt`) while someone holds it. */
  get(artifactId: string, options?: RequestOptions): APIPromise<ArtifactView> {
    return this.call('getArtifact', { artifactId }, undefined, options);
  }

  /** The content as the raw markdown file. */
  download(artifactId: string, options?: RequestOptions): APIPromise<string> {
    return this.call('downloadArtifact', { artifactId }, undefined, options);
  }

  /**
   * Takes the exclusive edit lock (or refreshes it if you hold it); LockedError if someone else
   * does, or, with `waitMs`, once that long has passed without their releasing it.
   */
  lock(artifactId: string, options?: LockOptions): APIPromise<LockResult> {
    const { waitMs, ...requestOptions } = options ?? {};
    return new APIPromise(
      this.lockWithin(artifactId, waitMs, requestOptions, (idempotencyKey) =>
        this.call('lockArtifact', { artifactId }, undefined, {
          ...requestOptions,
          idempotencyKey,
        }).withResponse(),
      ),
    );
  }

  /** Extends the lock you hold without writing. */
  heartbeat(artifactId: string, options?: RequestOptions): APIPromise<LockResult> {
    return this.call('heartbeatArtifactLock', { artifactId }, undefined, options);
  }

  /** Releases the lock (the owner may release anyone's). */
  unlock(artifactId: string, options?: RequestOptions): APIPromise<ArtifactView> {
    return this.call('unlockArtifact', { artifactId }, undefined, options);
  }

  /**
   * Saves `content` as the next version; you must hold the lock. With `baseVersion`, the write
   * is refused (ConflictError, `body.version` the current one) unless that is still the version.
   */
  write(
    artifactId: string,
    content: string,
    params: Omit<WriteArtifactParams, 'content'> = {},
    options?: RequestOptions,
  ): APIPromise<ArtifactView> {
    return this.call('writeArtifact', { artifactId }, { ...params, content }, options);
  }

  /** The versions of an artifact, newest first. */
  history(artifactId: string, options?: RequestOptions): APIPromise<ArtifactVersionList> {
    return this.call('listArtifactVersions', { artifactId }, undefined, options);
  }

  /** The artifact as it was at `version`. */
  version(artifactId: string, version: number, options?: RequestOptions): APIPromise<ArtifactView> {
    return checked(() =>
      this.call(
        'getArtifactVersion',
        { artifactId, version: versionOf('version', version) },
        undefined,
        options,
      ),
    );
  }

  /** A unified diff from version `from` to version `to`. */
  diff(artifactId: string, from: number, to: number, options?: RequestOptions): APIPromise<string> {
    return checked(() =>
      this.call(
        'diffArtifactVersions',
        { artifactId },
        { from: versionOf('from', from), to: versionOf('to', to) },
        options,
      ),
    );
  }

  /** Writes the content of `version` as a new version; you must hold the lock. */
  restore(artifactId: string, version: number, options?: RequestOptions): APIPromise<ArtifactView> {
    return checked(() =>
      this.call(
        'restoreArtifactVersion',
        { artifactId, version: versionOf('version', version) },
        undefined,
        options,
      ),
    );
  }

  /**
   * Locks the artifact, hands it to `fn`, keeps the lock alive while `fn` runs (heartbeats) and
   * unlocks it afterwards, also when `fn` throws. Resolves with what `fn` returns (or rejects with
   * what it threw) once the lock is released: an unlock that gets no answer, a 5xx or a 429 is made
   * again (after its Retry-After, or a backoff) until it succeeds, the lock is known gone (taken by
   * someone else, the key or the space ended), or the lock's lifetime has passed. When the release
   * cannot be confirmed (`options.signal` aborted the wait, or the server refused the unlock for
   * another reason), it rejects with an UnlockError, whose `outcome` is what `fn` did. It is not
   * re-entrant: while one runs, another of the same key and artifact in this process (nested, or
   * from another client of the key) is refused with a LockedError naming your own participant.
   *
   * A lock someone else holds is a LockedError at once, unless `options.waitMs` says how long to
   * wait for it: the lock is then asked for again, at pauses from about 200 ms to 2 s, until it is
   * taken (then `fn` is called) or the time is up (the last LockedError, `fn` not called). A
   * withLock of the same key running in this process is waited for the same way, until it ends
   * (a nested one, which its outer one waits for, only until its `waitMs` is up).
   *
   * When the lock call itself fails in a way that may have taken the lock (no answer, a timeout, a
   * 5xx, the signal ending it while it was out), `fn` is not called and withLock rejects with that
   * error, but first asks the server, with the call's Idempotency-Key, whether it took the lock,
   * and releases it if so (never another participant's lock). That is asked as any call is (1 +
   * `maxRetries` attempts), even after the signal aborted; when no answer comes, a warning is
   * logged saying until when the lock may stay held.
   *
   * ```ts
   * await me.artifacts.withLock(id, (doc) => doc.write(doc.content + '\n- one more item'));
   * ```
   *
   * @param fn Called with `doc`, a LockedArtifact: the artifact as read under the lock (`content`,
   * `version`), `write(content)` to save the next version, `reload()`, and `signal`, aborted if
   * the lock is lost.
   * @param options Each call's request options, `waitMs` and `heartbeatIntervalMs`.
   */
  async withLock<T>(
    artifactId: string,
    fn: (doc: LockedArtifact) => T | Promise<T>,
    options?: WithLockOptions,
  ): Promise<T> {
    // Said before the lock is taken, not by the call of a missing callback under it.
    if (typeof fn !== 'function')
      throw new ConveneError('withLock needs a callback: withLock(id, (doc) => …)');
    // One key for several writes would have the server replay the first heartbeat's answer to
    // every later one, without extending the lock: the key is the lock's alone.
    const { heartbeatIntervalMs, idempotencyKey, waitMs = 0, ...requestOptions } = options ?? {};
    const deadline = Date.now() + waitMs;
    // The server lets a lock's holder lock it again (a refresh): two withLocks of one key in this
    // process would both run, and the first to end would unlock under the other. They take turns
    // as two participants do: the second waits for the first to end as it would for another
    // participant's lock (waitMs), or is refused, without a request, naming the holder as the
    // server would, its own participant: not a LockedError without lockedBy, which says that
    // nobody holds the lock.
    const held = `${this.transport.options.baseUrl}\n${this.spaceId}\n${this.key}\n${artifactId}`;
    while (heldHere.has(held)) {
      const left = deadline - Date.now();
      if (!(left > 0)) {
        const refused = new LockedError(
          `artifact ${artifactId} is held by your own withLock still: withLock is not re-entrant`,
          { status: 423 },
        );
        // No answer came, so no body to read them from (as the transport adds an idempotencyKey):
        // the code the server gives a lock someone holds, so `code === 'lock_held'` catches it too.
        const lockedBy = this.participantId ?? heldHere.get(held);
        throw setField(setField(refused, 'lockedBy', lockedBy), 'code', 'lock_held');
      }
      // Looked at again every 100 ms: it costs no request, and the lock is free soon after it ends.
      await sleep(Math.min(left, 100), requestOptions.signal, this.lockAborted(artifactId));
    }
    heldHere.set(held, this.participantId);
    try {
      /** When the lock call that took the lock was sent: the lock lives a lifetime from then at least. */
      let locking = 0;
      const { data: lock, response } = await this.lockWithin(
        artifactId,
        deadline - Date.now(),
        { ...requestOptions, idempotencyKey },
        // The key is chosen by lockWithin, not by the transport: a call that got no answer is asked again with it.
        async (lockKey) => {
          locking = Date.now();
          try {
            return await this.lock(artifactId, { ...requestOptions, idempotencyKey: lockKey }).withResponse();
          } catch (error) {
            // The server may have taken the lock all the same: nobody would release it for its lifetime.
            if (error instanceof ConveneError && error.mayHaveRun && !nothingToRelease(error))
              await this.releaseIfTaken(artifactId, lockKey, error, requestOptions);
            throw error;
          }
        },
      );
      // Heartbeats go at a third of it.
      const measured = msLeft(lock.lockExpiresAt, response.headers);
      // A lifetime the answer does not give (no Date, say) is the spec's 10 minutes.
      const lifetime = measured > 0 ? measured : SPEC_LOCK_LIFETIME_MS;
      /**
       * `renewed`: when the last request the server confirmed had refreshed the lock was sent; the
       * lock lives until `renewed + lifetime` at least. `settled`: when the last request that may have
       * refreshed it ended, answered or not; no lock of ours outlives `settled + lifetime`.
       */
      const times = { renewed: locking, settled: Date.now() };
      const lost = new AbortController();
      /** The lock is known not to be ours any more: nothing is to be released. */
      let gone = false;
      const isGone = (error: ConveneError) => {
        gone = true;
        lost.abort(error);
      };
      const settled = () => {
        times.settled = Date.now();
      };
      // The callback's signal: the lock lost, or the caller's signal aborted.
      const { controller: ended, release } = linkedController(requestOptions.signal, lost.signal);
      let timer: ReturnType<typeof setTimeout> | undefined;
      let lapse: ReturnType<typeof setTimeout> | undefined;
      let stopped = false;
      let outcome: PromiseSettledResult<T>;
      try {
        const artifact = await this.get(artifactId, requestOptions);
        const lease = {
          holder: lock.lockedBy,
          expiresAt: lock.lockExpiresAt,
          // Renewed by every heartbeat and write that succeeds, counted from when it was sent. Past
          // it with no renewal (heartbeats refused by a rate limit, a process that stalled), the
          // lock is gone on the server whatever comes next: the callback hears it at once.
          refreshed(sent: number, expiresAt?: string) {
            if (expiresAt) this.expiresAt = expiresAt;
            times.renewed = Math.max(times.renewed, sent);
            clearTimeout(lapse);
            if (stopped) return;
            lapse = setTimeout(
              () => lost.abort(lockNotHeld(`the lock on artifact ${artifactId} lapsed, not renewed`)),
              Math.max(0, sent + lifetime - Date.now()),
            );
          },
          settled,
          lost: isGone,
        };
        const doc = new LockedArtifact(this, artifact, lease, ended.signal, requestOptions.signal);
        lease.refreshed(locking);
        // At most 30 s apart: a heartbeat is what tells the callback that the space closed or expired,
        // or that the key was removed (a 401), so the default 10-minute lock beats more often than
        // its lifetime needs (every 200 s), at 2 calls a minute.
        // Never below 500 ms: a smaller interval (0, 1) spent the key's rate limit on heartbeats.
        const interval = timerMs(Math.max(heartbeatIntervalMs ?? Math.min(lifetime / 3, 30_000), 500));
        const beat = async () => {
          // The caller gave up: the callback is ending, and the lock is released after it. Or the
          // lock is lost, lapsed unrenewed: the callback was told, and a beat would only fail again.
          if (requestOptions.signal?.aborted || lost.signal.aborted) return;
          // The next beat is due an interval after this one was sent, not after its answer: a slow
          // answer (a loaded server, a long round trip) must not stretch the gap toward the expiry.
          const sent = Date.now();
          try {
            lease.refreshed(sent, (await this.heartbeat(artifactId, requestOptions)).lockExpiresAt);
          } catch (error) {
            // Lost for good (expired and taken, or the key or the space ended): tell the callback through its signal.
            if (lockGone(error)) return isGone(error as ConveneError);
            this.transport.logger.warn(`heartbeat of artifact ${artifactId} failed: ${String(error)}`);
          } finally {
            settled();
          }
          if (!stopped && !lost.signal.aborted)
            timer = setTimeout(beat, Math.max(0, interval - (Date.now() - sent)));
        };
        timer = setTimeout(beat, interval);
        outcome = { status: 'fulfilled', value: await fn(doc) };
      } catch (error) {
        outcome = { status: 'rejected', reason: error };
      } finally {
        stopped = true;
        clearTimeout(timer);
        clearTimeout(lapse);
        release();
      }
      if (!gone) {
        const failure = await this.release(artifactId, lock.lockedBy, times, lifetime, requestOptions);
        const lockExpiresAt = new Date(times.settled + lifetime).toISOString();
        if (failure)
          throw new UnlockError<T>(
            `withLock could not release the lock on artifact ${artifactId} (${failure.message}` +
              `${requestOptions.signal?.aborted ? '; the signal ended the wait' : ''}); it may be held until ${lockExpiresAt}`,
            { artifactId, outcome, lockExpiresAt, cause: failure },
          );
      }
      if (outcome.status === 'rejected') throw outcome.reason;
      return outcome.value;
    } finally {
      heldHere.delete(held);
    }
  }

  /**
   * Makes `attempt`, a lock call with the Idempotency-Key it is given, until it takes the lock or
   * `waitMs` has passed: a LockedError (someone holds the lock, or held it a moment ago, as a lock
   * call refused while its holder unlocked says) is tried again after a pause, any other error
   * thrown. Each attempt is a new write, with a new key: the server replays the 423 it answered
   * under a key it has seen. The pauses, jittered, start at about 200 ms (a lock is often released
   * soon) and grow to 2 s, which keeps a waiting agent at about 40 calls a minute, far under the
   * server's rate limit (300). None lasts past the lock's expiry, on the server's clock: the Date
   * header, in whole seconds, may be up to a second behind it, so the lapse is reckoned a second
   * early, and looked for again every 100 ms or so from then.
   */
  private async lockWithin<T>(
    artifactId: string,
    waitMs: number | undefined,
    { signal, idempotencyKey }: RequestOptions,
    attempt: (idempotencyKey: string) => Promise<T>,
  ): Promise<T> {
    const deadline = Date.now() + (waitMs ?? 0);
    for (let n = 0; ; n++) {
      try {
        return await attempt((n === 0 && idempotencyKey) || uuid4());
      } catch (error) {
        const left = deadline - Date.now();
        if (!(error instanceof LockedError && left > 0)) throw error;
        const lapse = msLeft(error.lockExpiresAt, error.headers) - CLOCK_SLACK_MS;
        // NaN when the 423 names no lock (nobody held it by the time the server looked): 100 ms then.
        // biome-ignore lint/complexity/useMathMinMax: Math.max(NaN, 100) is NaN, which would be no pause at all
        const delay = Math.min(backoffMs(n, 2000, 200), lapse > 100 ? lapse : 100, left);
        if (!n)
          this.transport.logger.info(
            `artifact ${artifactId} is locked (${error.message}); waiting ${left < 1 / 0 ? `up to ${Math.round(left)} ms ` : ''}for it`,
          );
        await sleep(delay, signal, this.lockAborted(artifactId));
      }
    }
  }

  /** What the AbortError of a wait for a lock says: as the lock call's own, had it been cut off. */
  private lockAborted(artifactId: string): string {
    return this.transport.aborted('lockArtifact', { spaceId: this.spaceId, artifactId });
  }

  /**
   * After a lock call that may have taken the lock without saying so (its answer lost or cut off by
   * the timeout, a 5xx, the caller's signal ending it while it was out), finds out, and releases
   * the lock if the call took it: otherwise nobody would, and every other participant would be
   * refused for the lock's whole lifetime. It makes the call again with its own Idempotency-Key,
   * which the server answers as it answered the call, or, when the call never ran, by taking the
   * lock now. Either way a LockResult is a lock of this key's, released as withLock releases one;
   * a 423 says the lock is someone else's and the call took nothing, so nothing is unlocked: from
   * the space's owner an unlock would release that other participant's lock. The call is made as
   * any call is (1 + `maxRetries` attempts, after a Retry-After or a backoff), whether the caller's
   * signal has aborted or not, as withLock's unlock is, and the release too, never longer: when
   * either fails, a warning says until when the lock may stay held.
   */
  private async releaseIfTaken(
    artifactId: string,
    idempotencyKey: string,
    failure: ConveneError,
    requestOptions: RequestOptions,
  ): Promise<void> {
    const stranded = (why: string, until: number) =>
      this.transport.logger.warn(
        `withLock's lock call on artifact ${artifactId} failed (${failure.message}); ${why}: the lock ` +
          `may stay held until about ${new Date(until).toISOString()}`,
      );
    let answer: WithResponse<LockResult>;
    try {
      answer = await this.lock(artifactId, {
        ...requestOptions,
        signal: undefined,
        idempotencyKey,
      }).withResponse();
    } catch (error) {
      // A 409 too (duplicate_request: the call still runs on the server, which may yet take it).
      if (!nothingToRelease(error))
        stranded(`asking again failed (${(error as Error).message})`, Date.now() + SPEC_LOCK_LIFETIME_MS);
      return;
    }
    const { data: lock, response } = answer;
    // How long it lives on, on the server's clock: a replay answers the call's own expiry.
    const left = msLeft(lock.lockExpiresAt, response.headers);
    // Lapsed, or about to: whoever holds it by the time an unlock arrived would not be this call.
    if (!(left >= CLOCK_SLACK_MS)) return;
    // Its lapse as the server said it. The lifetime is unknown here (a replay's Date header is the
    // replay's, not the call's), and any will do: release() only adds it to these times.
    const lapses = Date.now() + left;
    const at = lapses - SPEC_LOCK_LIFETIME_MS;
    // An aborted signal: the unlock's ordinary attempts, and none beyond them.
    const unreleased = await this.release(
      artifactId,
      lock.lockedBy,
      { renewed: at, settled: at },
      SPEC_LOCK_LIFETIME_MS,
      { ...requestOptions, signal: AbortSignal.abort() },
    );
    if (unreleased) stranded(`it took the lock, and unlocking failed (${unreleased.message})`, lapses);
  }

  /**
   * Releases the lock `withLock` took, persistently: an unlock that gets no answer, a 5xx, a 408
   * or a 429 is made again (after its Retry-After, or a backoff), with one Idempotency-Key, until
   * it succeeds or the lock is known gone: not held by `me` any more (a 423, or nobody holds it),
   * the key or the space ended (401, 404, 410), or its lifetime has passed since the last request
   * that may have refreshed it. The client's ordinary attempts (1 + `maxRetries`) are always made;
   * past them, the caller's signal ends the wait. Resolves with the error that left the release
   * unconfirmed, or undefined.
   */
  private async release(
    artifactId: string,
    me: string,
    times: { renewed: number; settled: number },
    lifetime: number,
    requestOptions: RequestOptions,
  ): Promise<ConveneError | undefined> {
    const { signal } = requestOptions;
    const ordinary = 1 + (requestOptions.maxRetries ?? this.transport.options.maxRetries);
    const once = { ...requestOptions, maxRetries: 0 };
    const idempotencyKey = uuid4();
    /** The last unlock's failure: what the error says when the caller stops waiting. */
    let last: ConveneError | undefined;
    for (let attempt = 0; ; attempt++) {
      // Past the client's ordinary attempts, the caller decides how long to wait.
      const bounded = attempt >= ordinary ? signal : undefined;
      if (bounded?.aborted) return last ?? new AbortError('aborted', { cause: bounded.reason });
      // No lock of ours outlives this: it has lapsed on the server.
      const goneBy = times.settled + lifetime + CLOCK_SLACK_MS;
      if (Date.now() >= goneBy) {
        this.transport.logger.warn(`artifact ${artifactId}: unlock unconfirmed; the lock has lapsed`);
        return undefined;
      }
      let error: unknown;
      try {
        // Past the lapse as last confirmed, someone else may hold it, whose lock the space's
        // owner's unlock would release: unlock only what the server says is still this key's
        // (an answer lost with the lock renewed).
        if (Date.now() >= times.renewed + lifetime) {
          const { data: current, response } = await this.get(artifactId, {
            ...once,
            signal: bounded,
          }).withResponse();
          if (current.lockedBy !== me || !current.lockExpiresAt) return undefined;
          const left = msLeft(current.lockExpiresAt, response.headers);
          // It lives `left` more: no earlier than that is it gone.
          times.settled = Math.max(times.settled, Date.now() + left - lifetime);
          if (left < CLOCK_SLACK_MS) {
            // Too close to its lapse to unlock safely: let it lapse, then look again.
            await sleep(Math.max(0, left) + 100, bounded);
            continue;
          }
          times.renewed = Date.now() + left - lifetime;
        }
        await this.unlock(artifactId, { ...once, idempotencyKey, signal: bounded });
        return undefined;
      } catch (thrown) {
        error = thrown;
      }
      if (lockGone(error)) return undefined;
      if (!(error instanceof ConveneError)) return new ConveneError(String(error), { cause: error });
      // No answer, or one that may be tried again.
      if (!(error instanceof ConnectionError || retryableStatus(error.status!))) return error;
      last = error;
      // What Retry-After asks however long (the lock's lapse bounds it), else the backoff.
      const delay = Math.min(
        retryDelayMs(error.headers, Math.min(attempt, 4), Number.POSITIVE_INFINITY)!,
        Math.max(0, goneBy - Date.now()),
      );
      this.transport.logger.info(
        `unlocking artifact ${artifactId} failed (${error.message}); trying again in ${Math.round(delay)} ms`,
      );
      try {
        await sleep(delay, attempt + 1 >= ordinary ? signal : undefined);
      } catch {
        return error;
      }
    }
  }
}

/**
 * A version number as the server takes it. What is plainly none (1.5, 0, -1, NaN) is said here,
 * under the name the caller used: the server would answer that no such version exists (404), as
 * for a version not written yet.
 */
function versionOf(name: string, version: number): string {
  // A version arrives as a number in TypeScript; plain JavaScript may pass anything.
  if (!Number.isSafeInteger(version) || version < 1)
    throw new ConveneError(`${name} must be a version number (1, 2, …), not ${String(version)}`);
  return String(version);
}

/** The call `make` makes, or what it threw as the call's rejection, as a refused request would be. */
function checked<T>(make: () => APIPromise<T>): APIPromise<T> {
  try {
    return make();
  } catch (error) {
    return new APIPromise<T>(Promise.reject(error));
  }
}

/**
 * How long a lock lives on after the answer whose `headers` named its `expiresAt`, measured on the
 * server's clock (its Date header; this machine's without one), so that a skewed local clock does
 * not matter. NaN when there is no `expiresAt`.
 */
function msLeft(expiresAt: string | undefined, headers: Headers | undefined): number {
  const date = Date.parse(headers?.get('date') ?? '');
  return Date.parse(expiresAt ?? '') - (Number.isNaN(date) ? Date.now() : date);
}

/** A Date header's precision (whole seconds): what a lifetime measured on it may be off by. */
const CLOCK_SLACK_MS = 1000;

/** A lock's lifetime as the API specifies it, where the server does not say it. */
const SPEC_LOCK_LIFETIME_MS = 10 * 60_000;

/**
 * Whether an error says that no lock of this key is left to release: someone else holds it (423),
 * or the key, the artifact or the space has ended (401, 404, 410).
 */
const lockGone = (error: unknown): boolean => hasStatus(error, 423, 401, 404, 410);

/**
 * Whether a lock call's failure says that it did not take the lock, whatever its earlier attempts
 * did: they carried the same Idempotency-Key, so a lock one of them took would have been replayed
 * instead. No lock of this key is left (lockGone), or the participant may not lock (403).
 */
const nothingToRelease = (error: unknown): boolean => hasStatus(error, 423, 401, 404, 410, 403);

/**
 * The withLocks running in this process, by server, space, key and artifact, with the key's
 * participant when its client knows it.
 */
const heldHere = new Map<string, string | undefined>();

/**
 * The LockedError of a lock this client no longer holds, said without a request: coded as the
 * server codes a write under a lock one does not hold.
 */
function lockNotHeld(message: string): LockedError {
  return setField(new LockedError(message, { status: 423 }), 'code', 'lock_not_held');
}
