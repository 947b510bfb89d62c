import { isMemoryUrl } from '@convene/core';
import type { ServerConfig } from './env';
import { textOutput } from './http/request-log';
import { type ConveneServer, createServer } from './server';

/**
 * Runs the service as a process: start, print the readiness line scripts wait for, and stop
 * cleanly on SIGTERM/SIGINT. What `pnpm start` and `convene serve` both run.
 */
export async function serve(config: ServerConfig): Promise<ConveneServer> {
  // JSON for log collectors; text for a person watching a terminal.
  const text = (config.logFormat ?? (process.stdout.isTTY ? 'text' : 'json')) === 'text';
  const color = text && process.stdout.isTTY === true && !process.env.NO_COLOR;
  const server = await createServer(config, text ? { logStream: textOutput(process.stdout, color) } : {});
  // Stopped cleanly from here on: a signal sent as soon as the readiness line is read must find
  // the handlers in place (before them, SIGTERM and SIGINT kill the process outright).
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal} received: shutting down`);
    const force = setTimeout(() => {
      console.error('shutdown took too long; exiting');
      process.exit(1);
    }, 14_000);
    force.unref();
    server.close().then(
      () => process.exit(0),
      (error) => {
        console.error('shutdown failed', error);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  const address = await server.app.listen({ port: config.port, host: config.host });
  // The readiness line scripts wait for; migrations ran before it.
  console.log(
    `Convene listening on ${address} (public URL ${config.publicUrl}, database ${describeDatabase(config)})`,
  );

  return server;
}

function describeDatabase(config: ServerConfig): string {
  if (!config.databaseUrl) return `embedded PGlite in ${config.dataDir}`;
  if (isMemoryUrl(config.databaseUrl)) return 'in-memory PGlite';
  return 'PostgreSQL';
}
