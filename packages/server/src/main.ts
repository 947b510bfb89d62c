import { loadConfig } from './env';
import { createServer } from './server';

async function main() {
  const config = loadConfig();
  const server = await createServer(config);
  const address = await server.app.listen({ port: config.port, host: config.host });
  // The readiness line scripts wait for; migrations ran before it.
  console.log(
    `Convene listening on ${address} (public URL ${config.publicUrl}, database ${describeDatabase(config)})`,
  );

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
}

function describeDatabase(config: ReturnType<typeof loadConfig>): string {
  if (!config.databaseUrl) return `embedded PGlite in ${config.dataDir}`;
  if (config.databaseUrl === 'memory://') return 'in-memory PGlite';
  return 'PostgreSQL';
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
