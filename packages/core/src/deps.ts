import type { DashboardSessions } from './accounts/sessions';
import type { DiffEngine } from './artifacts/diff-engine';
import type { Clock } from './clock';
import type { Db } from './db/types';
import { UnavailableError } from './errors';
import type { EventBus } from './events/event-bus';
import type { SpaceWatch } from './events/space-watch';
import type { Sealer } from './infra/sealer';
import { defaultWebhookUrlPolicy, type HostLookup, type WebhookUrlPolicy } from './webhooks/url-policy';

export interface CoreConfig {
  /** Absolute base of every URL the service hands out. */
  publicUrl: string;
  lockTtlSeconds: number;
  linkTtlSeconds: number;
  /** How long a `usr_` token works after it is minted. */
  userTokenTtlSeconds: number;
  suggestedPollingIntervalMs: number;
  /** Where webhooks may point (SSRF guard). */
  webhookUrls: WebhookUrlPolicy;
  /**
   * The waits between a webhook delivery's attempts; once they are spent (about 24 h) the
   * delivery is given up.
   */
  webhookRetryDelaysMs: readonly number[];
}

/**
 * A request's deadline as a write that commits on its own sees it (the group-committed send,
 * one statement in its own transaction, which nothing can roll back once it is out; a link
 * poll). Whether the client was answered already (503, too slow): then the write must not go
 * out, or must roll back; and, as it goes out, `committing()`: from then on the request's answer
 * is the database's, however late, since a 503 would tell the client that it did not happen
 * while it may still commit.
 */
export interface WriteDeadline {
  abandoned(): boolean;
  committing(): void;
}

/**
 * Called in a write's transaction just before its COMMIT: throws (rolling it back) if the request
 * was answered 503 already, else marks it committing, so that its answer is the commit's.
 */
export function beforeCommit(deadline: WriteDeadline | undefined): void {
  if (deadline?.abandoned()) throw new UnavailableError('the request timed out before its write committed');
  deadline?.committing();
}

/** The ports every use case receives; composed once by the server (or a test). */
export interface Deps {
  db: Db;
  clock: Clock;
  /** Seals and opens the secrets handed out again, under SECRET (infra/sealer.ts). */
  box: Sealer;
  /** Dashboard JWTs: issued for built-in accounts, verified on /hub/me/* and key recovery. */
  sessions: DashboardSessions;
  /** Unified diffs of artifact versions, computed off the request thread and cached. */
  diffs: DiffEngine;
  /** Stream events between nodes (LISTEN/NOTIFY today). */
  events: EventBus;
  config: CoreConfig;
  /** Space events as they commit, on any node: long polls wait on it. Absent, they answer at once. */
  watch?: SpaceWatch | undefined;
  /** Test hook: how webhook URLs' hosts are looked up (the system's resolver when absent). */
  lookupHost?: HostLookup | undefined;
}

/**
 * After the first attempt: 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 2 h, 4 h, 8 h, 8 h. The last
 * attempt comes about 23 h 43 min after the event.
 */
export const defaultWebhookRetryDelaysMs: readonly number[] = [
  5, 30, 120, 600, 1800, 3600, 7200, 14_400, 28_800, 28_800,
].map((seconds) => seconds * 1000);

export const defaultCoreConfig: CoreConfig = {
  publicUrl: 'http://localhost:3000',
  lockTtlSeconds: 600,
  linkTtlSeconds: 600,
  userTokenTtlSeconds: 90 * 86_400,
  suggestedPollingIntervalMs: 2000,
  webhookUrls: defaultWebhookUrlPolicy,
  webhookRetryDelaysMs: defaultWebhookRetryDelaysMs,
};
