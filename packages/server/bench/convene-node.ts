// The real Convene server, configured from the environment (rate limit raised by run.ts).
import { loadConfig } from '../src/env';
import { createServer } from '../src/server';

const config = loadConfig(process.env);
const server = await createServer(config, { logger: config.logLevel !== 'silent' });
const address = await server.app.listen({ port: 0, host: '127.0.0.1' });
process.send?.({ ready: Number(new URL(address).port) });
process.on('SIGTERM', () => {
  void server.close().then(() => process.exit(0));
});
