import {
  type Clock,
  createJwtSessions,
  createNotifyBus,
  type Database,
  type Deps,
  type EventBus,
  type HostLookup,
  loadSessionKeys,
  openDatabase,
  Sealer,
  SecretBox,
  systemClock,
  WorkerDiffEngine,
} from '@convene/core';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app';
import { startEmbeddedMaintenance } from './embedded-maintenance';
import type { ServerConfig } from './env';
import { EventHub } from './events/hub';
import { startLockExpirySweeper } from './events/lock-expiry-sweeper';
import { hubSpaceWatch } from './events/space-watch';
import { backgroundFailure } from './http/log-errors';
import { type PolicyStores, policyStoresFor, rateLimitsOf } from './http/stores';
import { McpSessionStreams } from './mcp/session-streams';
import { loadOrCreateSecret, settleSecret } from './secret';
import { startStalledSessionSweeper } from './stalled-session-sweeper';
import { startWarnings } from './start-warnings';
import { webhookPoster } from './webhooks/post';
import { WebhookWorker } from './webhooks/worker';

export interface ConveneServer {
  app: FastifyInstance;
  database: Database;
  deps: Deps;
  config: ServerConfig;
  /**
   * Fails readiness and keeps serving (see FastifyInstance.draining) for `ms`, or until `cut` is
   * aborted; close() follows. What a load balancer needs to stop sending requests first.
   */
  drain(ms: number, cut?: AbortSignal): Promise<void>;
  /** Stop accepting, end streams, finish in-flight requests, close the database. */
  close(): Promise<void>;
}

export interface CreateServerOptions {
  clock?: Clock;
  logger?: boolean;
  /** Test hook: where log lines go instead of stdout (tests that read the log). */
  logStream?: { write(line: string): void };
  /**
   * Test hook: an open, migrated database in place of the one the config names (the tests' PGlite
   * databases, each reused by the next server once emptied). Closed with the server, as its own.
   */
  database?: Database;
  /** Test hook: the event bus in place of the server's own (given it, to wrap it). */
  events?: (bus: EventBus) => EventBus;
  /** Test hook: how webhook URLs' hosts are looked up at registration (Deps.lookupHost). */
  lookupHost?: HostLookup;
  /** Benchmark hook: replace some of the default policy stores (e.g. an in-process rate limiter). */
  policies?: Partial<PolicyStores>;
  /** How long to wait for a PostgreSQL that cannot be reached yet, told of each attempt (serve). */
  waitForDatabase?: { ms: number; onUnreachable: (message: string) => void };
}

/** Composes the whole service: the one place ports get their real implementations. */
export async function createServer(
  config: ServerConfig,
  options: CreateServerOptions = {},
): Promise<ConveneServer> {
  // What start-up has to say before the app's logger exists, logged once it does.
  const early: { level: 'info' | 'warn'; message: string }[] = [];
  const database =
    options.database ??
    (await openDatabase({
      url: config.databaseUrl,
      dataDir: config.dataDir,
      onDataDirTightened: (message) => early.push({ level: 'info', message }),
      onDataDirCopied: (message) => early.push({ level: 'warn', message }),
      onMigrated: (message) => early.push({ level: 'info', message }),
      onNewerSchema: (message) => early.push({ level: 'warn', message }),
      waitForServerMs: options.waitForDatabase?.ms,
      onUnreachable: options.waitForDatabase?.onUnreachable,
    }));
  try {
    const secret =
      config.secret ??
      (await loadOrCreateSecret(
        database,
        config,
        (message) => early.push({ level: 'warn', message }),
        (message) => early.push({ level: 'info', message }),
      ));
    const current = new SecretBox(secret);
    const previous = await settleSecret(database, config, current, (message) =>
      early.push({ level: 'info', message }),
    );
    // Told once the app's logger exists (a node whose SECRET another node replaced).
    const box = new Sealer(current, { previous });
    // Logged once the app's logger exists (a worker failing before then has nothing to diff).
    let diffWorkerFailed = (_error: unknown) => {};
    const bus = createNotifyBus(database);
    const deps: Deps = {
      db: database.db,
      clock: options.clock ?? systemClock,
      box,
      events: options.events?.(bus) ?? bus,
      ...(options.lookupHost ? { lookupHost: options.lookupHost } : {}),
      // The deployment's issuer and key, from the database: a session minted by any node is
      // accepted by every other, whatever their PUBLIC_URLs, and survives restarts.
      sessions: createJwtSessions({
        keys: await loadSessionKeys(database.db, current),
        ttlSeconds: config.sessionTtlSeconds,
        external: config.oidc,
      }),
      // Worker threads, started at the first diff.
      diffs: new WorkerDiffEngine({ onWorkerError: (error) => diffWorkerFailed(error) }),
      config: {
        publicUrl: config.publicUrl,
        lockTtlSeconds: config.lockTtlSeconds,
        linkTtlSeconds: config.linkTtlSeconds,
        userTokenTtlSeconds: config.userTokenTtlSeconds,
        suggestedPollingIntervalMs: 2000,
        webhookUrls: config.webhookUrls,
        webhookRetryDelaysMs: config.webhookRetryDelaysMs,
      },
    };
    const app = await buildApp({
      config,
      deps,
      logger: options.logger ?? true,
      policies: {
        ...policyStoresFor(database, rateLimitsOf(config), deps.box),
        ...options.policies,
      },
      ...(options.logStream ? { logStream: options.logStream } : {}),
    });
    for (const { level, message } of early) app.log[level](message);
    for (const message of startWarnings(config)) app.log.warn(message);
    box.onStale = (message) => app.log.error(message);
    diffWorkerFailed = (error) =>
      app.log.error(
        { err: error },
        'a diff worker failed; its diff was answered with the replace-everything patch',
      );
    // One LISTEN per process, fanning events out to this process's streams.
    const hub = new EventHub({
      deps,
      caps: {
        perCredential: config.streamsPerCredential,
        perAddress: config.streamsPerAddress,
        renewMs: config.streamNodeRenewMs,
        // An embedded database has one server: its own count is the whole count.
        exclusive: database.engine === 'pglite',
      },
      pingMs: config.streamPingMs,
      leaseRenewMs: config.streamLeaseRenewMs,
      // It renews and resyncs once the database is back.
      onError: backgroundFailure(app.log, 'event hub'),
    });
    app.eventHub = hub;
    await hub.start();
    // Long polls wait on the hub: the SpaceWatch port of core.
    deps.watch = hubSpaceWatch(hub);
    const mcpStreams = new McpSessionStreams({
      database,
      deps,
      hub,
      pingMs: config.streamPingMs,
      onError: backgroundFailure(app.log, 'MCP sessions'),
    });
    app.mcpStreams = mcpStreams;
    await mcpStreams.start();
    const webhooks = new WebhookWorker({
      database,
      deps,
      poster: webhookPoster({ policy: config.webhookUrls, timeoutMs: config.webhookTimeoutMs }),
      pollMs: config.webhookPollMs,
      // Longer than an attempt may take, so no other node claims a delivery still being attempted.
      leaseMs: config.webhookTimeoutMs + 30_000,
      // Deliveries stay queued and are claimed again once the database is back.
      onError: backgroundFailure(app.log, 'webhooks'),
      onRefused: (delivery) =>
        app.log.warn(
          {
            spaceId: delivery.spaceId,
            webhookId: delivery.webhookId,
            deliveryId: delivery.id,
            attempt: delivery.attempt,
            // The host alone: a path or query may carry the receiver's own token.
            host: new URL(delivery.url).host,
          },
          "webhook delivery refused by this node's network policy: the host resolves to an address " +
            'that WEBHOOK_ALLOW_PRIVATE and WEBHOOK_ALLOW_NETWORKS do not allow here. Every node works ' +
            'on the one delivery queue: give them all the same webhook settings (the attempt counts as ' +
            'failed and is retried on schedule by whichever node claims it)',
        ),
    });
    await webhooks.start();
    const stopLockSweeper = await startLockExpirySweeper({
      deps,
      // PGlite runs each query on the event loop: sweep half as often (still well within 5 s).
      intervalMs: database.engine === 'pglite' ? config.lockSweepIntervalMs * 2 : config.lockSweepIntervalMs,
      log: app.log,
    });
    // PostgreSQL vacuums its own tables; PGlite's single process never does.
    const stopMaintenance =
      database.engine === 'pglite'
        ? startEmbeddedMaintenance({
            db: database.db,
            intervalMs: config.embeddedMaintenanceIntervalMs,
            log: app.log,
          })
        : async () => {};
    // PGlite is one process: no other node to freeze.
    const stopStalledSweeper = database.endStalledSessions
      ? startStalledSessionSweeper({
          endStalledSessions: database.endStalledSessions,
          intervalMs: config.stalledSessionSweepIntervalMs,
          log: app.log,
        })
      : async () => {};
    let closed: Promise<void> | undefined;
    return {
      app,
      database,
      deps,
      config,
      async drain(ms, cut) {
        app.draining = true;
        if (ms <= 0 || cut?.aborted) return;
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            cut?.removeEventListener('abort', done);
            resolve();
          };
          const timer = setTimeout(done, ms);
          cut?.addEventListener('abort', done, { once: true });
        });
      },
      close() {
        closed ??= (async () => {
          // Streams never finish by themselves: end them so the close below can complete.
          await stopLockSweeper();
          await stopMaintenance();
          await stopStalledSweeper();
          await webhooks.close();
          await mcpStreams.close();
          await hub.close();
          await app.close();
          await deps.diffs.close();
          await database.close();
        })();
        return closed;
      },
    };
  } catch (error) {
    await database.close();
    throw error;
  }
}
