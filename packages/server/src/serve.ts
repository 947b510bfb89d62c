import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { hostname } from 'node:os';
import { isMemoryUrl } from '@convene/core';
import pino from 'pino';
import { ConfigurationError, type ServerConfig } from './env';
import { standardOutput, textOutput, UNANNOUNCED } from './http/request-log';
import { type ConveneServer, createServer } from './server';

/** How long `serve` waits at start for a PostgreSQL it cannot reach, before it exits 1. */
const DATABASE_WAIT_MS = 60_000;

/** The exit code of a clean stop on each signal: SIGHUP (its terminal closed) is 128 + 1, as shells report it. */
const STOP_EXIT_CODES = { SIGTERM: 0, SIGINT: 0, SIGHUP: 129 } as const;
/** How long the exit waits for the log output to write what it holds. */
const OUTPUT_WAIT_MS = 2_000;
/** A log output that cannot write (its reader gone) stops nothing. */
const ignore = () => {};

export interface ServeOptions {
  /**
   * Called once the handlers that stop the server cleanly are in place (before the readiness
   * line): until then a signal has nothing to stop cleanly, and whoever runs `serve` decides.
   */
  onStoppable?: () => void;
  /**
   * Ends the process once the server stopped (or could not stop) with this code; process.exit
   * unless given (`convene serve` ends by SIGHUP when its terminal is gone, which Node's own end
   * would abort on).
   */
  exit?: (code: number) => void;
}

/**
 * Runs the service as a process: start, print the readiness line scripts wait for, and stop
 * cleanly on SIGTERM/SIGINT (exit 0) and on SIGHUP, its terminal closing (exit 129). What
 * `pnpm start` and `convene serve` both run.
 */
export async function serve(settings: ServerConfig, options: ServeOptions = {}): Promise<ConveneServer> {
  let config = settings;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const text = !logsAsJson(config.logFormat);
  const color = text && process.stdout.isTTY === true && !process.env.NO_COLOR;
  // JSON lines are buffered (standardOutput); see announcer.
  const jsonOutput = text ? undefined : standardOutput();
  const logStream = jsonOutput ?? textOutput(process.stdout, color);
  // Before the app's logger exists: the wait for PostgreSQL, in the same format and output.
  const startLog = pino({ level: config.logLevel }, logStream);
  const say = announcer(jsonOutput, config.logLevel === 'silent');
  /**
   * Runs `then` once, when the JSON output has written what it holds (at once with text logs), or
   * when the wait for it runs out: never held up by an output that stopped answering.
   */
  const afterOutput = (then: () => void) => {
    if (!jsonOutput) return then();
    let ran = false;
    const once = () => {
      if (ran) return;
      ran = true;
      then();
    };
    jsonOutput.flush(once);
    setTimeout(once, OUTPUT_WAIT_MS).unref();
  };
  // A port taken by another process is said at once, before a database is created or migrated
  // for nothing (listen would fail the same way, seconds later).
  const port = await portFree(config.host, config.port).catch((error: NodeJS.ErrnoException) => {
    // A HOST that names no address of this machine is the setting's fault: refused by its name,
    // as loadConfig refuses a setting (exit 2). It exited 1, as a start that failed.
    if (error.code === 'ENOTFOUND' || error.code === 'EADDRNOTAVAIL')
      throw new ConfigurationError(
        `invalid configuration: HOST: ${config.host} is no address of this machine to listen on (${error.code})`,
        { cause: error },
      );
    // A name server that did not answer may answer the next start: a failed start (exit 1).
    if (error.code === 'EAI_AGAIN')
      throw new Error(`HOST ${config.host} could not be looked up: no name server answered (EAI_AGAIN)`, {
        cause: error,
      });
    throw error;
  });
  // PORT=0 (any free port): the port is chosen now, so that the links the service hands out
  // name it, when PUBLIC_URL does not say otherwise (they named port 0).
  if (port !== config.port) {
    const publicUrl =
      config.publicUrl === `http://localhost:${config.port}` ? `http://localhost:${port}` : config.publicUrl;
    config = { ...config, port, publicUrl };
  }
  // A first start creates the embedded database, which takes seconds: said, not silent.
  say('info', `Convene starting (database: ${describeDatabase(config)})`);
  const server = await createServer(config, {
    logStream,
    // Started beside its database (compose, systemd): a PostgreSQL still starting is waited for.
    waitForDatabase: {
      ms: DATABASE_WAIT_MS,
      onUnreachable: (message) => startLog.warn(message),
    },
  });
  // Stopped cleanly from here on: a signal sent as soon as the readiness line is read must find
  // the handlers in place (before them, SIGTERM, SIGINT and SIGHUP kill the process outright).
  let stopping = false;
  // A second signal during a drain ends it: the operator (or the supervisor) wants it down now.
  const drainCut = new AbortController();
  const stop = (signal: keyof typeof STOP_EXIT_CODES) => {
    if (stopping) return drainCut.abort();
    stopping = true;
    // Only SIGTERM, what a supervisor or an orchestrator sends, drains: Ctrl-C and a closed
    // terminal stop at once.
    const drainMs = signal === 'SIGTERM' ? config.shutdownDrainMs : 0;
    say(
      'info',
      drainMs > 0
        ? `${signal} received: draining for ${drainMs / 1000} s (GET /api/health answers 503, requests are still served), then shutting down`
        : `${signal} received: shutting down`,
    );
    const force = setTimeout(() => {
      say('error', 'shutdown took too long; exiting');
      exit(1);
    }, drainMs + 14_000);
    force.unref();
    server
      .drain(drainMs, drainCut.signal)
      .then(() => server.close())
      .then(
        () => {
          say('info', 'Convene stopped');
          afterOutput(() => exit(STOP_EXIT_CODES[signal]));
        },
        (error) => {
          say('error', 'shutdown failed', {}, error);
          exit(1);
        },
      );
  };
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => stop(signal));
  options.onStoppable?.();
  // Fastify's own "Server listening at" line (one per address) is not printed: this one says it.
  const address = await server.app.listen({ port: config.port, host: config.host, ...UNANNOUNCED });
  // The readiness line scripts wait for; migrations ran before it, and their lines come first.
  say(
    'info',
    `Convene listening on ${address} (${describeInterfaces(config.host)}public URL ${config.publicUrl}, database ${describeDatabase(config)})`,
    { url: address, publicUrl: config.publicUrl },
  );

  return server;
}

/** JSON for log collectors; text for a person watching a terminal (LOG_FORMAT, else by stdout). */
export const logsAsJson = (format: ServerConfig['logFormat']): boolean =>
  (format ?? (process.stdout.isTTY ? 'text' : 'json')) === 'json';

const LEVELS = { info: 30, error: 50, fatal: 60 } as const;

/** A line `serve` writes itself, in the logger's JSON shape. */
export function jsonLogLine(
  level: keyof typeof LEVELS,
  msg: string,
  fields: Record<string, unknown> = {},
  error?: unknown,
): string {
  const err =
    error instanceof Error ? { type: error.name, message: error.message, stack: error.stack } : error;
  const line = { level: LEVELS[level], time: Date.now(), pid: process.pid, hostname: hostname(), ...fields };
  return JSON.stringify({ ...line, ...(err === undefined ? {} : { err }), msg });
}

/**
 * The lines `serve` itself prints (readiness, shutdown) at every log level but `silent`: scripts
 * wait for the readiness line. `silent` prints nothing on standard output; an error (a shutdown
 * that failed or took too long) still goes to standard error, and the exit code says how it
 * ended. Plain text for a terminal; with JSON logs, one JSON object per line in the logger's shape
 * (a log shipper reading stdout and stderr together got plain lines among them).
 */
function announcer(jsonOutput: ReturnType<typeof standardOutput> | undefined, silent: boolean) {
  return (
    level: 'info' | 'error',
    msg: string,
    fields: Record<string, unknown> = {},
    error?: unknown,
  ): void => {
    if (silent && level === 'info') return;
    const out = level === 'error' ? console.error : console.log;
    if (!jsonOutput) return void (error === undefined ? out(msg) : out(msg, error));
    const line = jsonLogLine(level, msg, fields, error);
    if (level === 'error') return void out(line);
    // Into the loggers' own buffered output, then flushed: after every line logged before it
    // (written beside it, it had overtaken request lines still buffered).
    jsonOutput.write(`${line}\n`);
    jsonOutput.flush(ignore);
  };
}

/**
 * What a start that failed with `error` says, and its exit code: a refused setting
 * (ConfigurationError) in its own words, exit 2; anything else as a start that failed, exit 1.
 */
export function startFailure(error: unknown): { message: string; exitCode: 1 | 2 } {
  if (error instanceof ConfigurationError) return { message: error.message, exitCode: 2 };
  return {
    message: `the server did not start: ${error instanceof Error ? error.message : String(error)}`,
    exitCode: 1,
  };
}

/**
 * The line of a failure that ends a process before it serves (its configuration refused, its
 * database unreachable, its port taken), on standard error at every log level: with JSON logs one
 * JSON object at level 60 (fatal), `hint` and `exitCode` among its fields, like every other line;
 * else the message and the hint as text.
 */
export function startFailureLine(
  json: boolean,
  message: string,
  fields: { hint?: string | undefined; exitCode: number },
): string {
  if (json)
    return jsonLogLine('fatal', message, {
      ...(fields.hint ? { hint: fields.hint } : {}),
      exitCode: fields.exitCode,
    });
  return fields.hint ? `${message}\n${fields.hint}` : message;
}

/**
 * Fastify answers a wildcard host with one loopback address, which read as if the server took
 * only local connections: say that it listens on every interface.
 */
function describeInterfaces(host: string): string {
  if (host === '0.0.0.0') return 'on every IPv4 interface, HOST=0.0.0.0; ';
  if (host === '::' || host === '[::]') return 'on every interface, HOST=::; ';
  return '';
}

function describeDatabase(config: ServerConfig): string {
  if (!config.databaseUrl) return `embedded PGlite in ${config.dataDir}`;
  if (isMemoryUrl(config.databaseUrl)) return 'in-memory PGlite';
  return 'PostgreSQL';
}

/**
 * The port to listen on at `host`: `port`, or for 0 (any) one the system gives now; rejects, with
 * listen's own error (EADDRINUSE, EACCES…), when it cannot be listened on. A check, not a
 * reservation: the server listens later.
 */
function portFree(host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createNetServer();
    probe.once('error', reject);
    probe.listen({ port, host, exclusive: true }, () => {
      const { port: given } = probe.address() as AddressInfo;
      probe.close(() => resolve(given));
    });
  });
}
