import type { DashboardSessions } from './accounts/sessions';
import type { DiffEngine } from './artifacts/diff-engine';
import type { Clock } from './clock';
import type { Db } from './db/types';
import type { EventBus } from './events/event-bus';
import type { SecretBox } from './secrets';

export interface CoreConfig {
  /** Absolute base of every URL the service hands out. */
  publicUrl: string;
  lockTtlSeconds: number;
  linkTtlSeconds: number;
  /** How long a `usr_` token works after it is minted. */
  userTokenTtlSeconds: number;
  suggestedPollingIntervalMs: number;
}

/** The ports every use case receives; composed once by the server (or a test). */
export interface Deps {
  db: Db;
  clock: Clock;
  box: SecretBox;
  /** Dashboard JWTs: issued for built-in accounts, verified on /hub/me/* and key recovery. */
  sessions: DashboardSessions;
  /** Unified diffs of artifact versions, computed off the request thread and cached. */
  diffs: DiffEngine;
  /** Stream events between nodes (LISTEN/NOTIFY today). */
  events: EventBus;
  config: CoreConfig;
}

export const defaultCoreConfig: CoreConfig = {
  publicUrl: 'http://localhost:3000',
  lockTtlSeconds: 600,
  linkTtlSeconds: 600,
  userTokenTtlSeconds: 90 * 86_400,
  suggestedPollingIntervalMs: 2000,
};
