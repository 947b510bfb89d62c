// The real Convene server, configured from the environment (rate limit raised by run.ts).
// BENCH_RATE_LIMITER=memory swaps the database rate limiter for the in-process one (info only).
import { MemoryRateLimiter } from '@convene/core';
import { loadConfig } from '../src/env';
import { createServer } from '../src/server';
import { answerMemoryProbes } from './processes';

const config = loadConfig(process.env);
const server = await createServer(config, {
  logger: config.logLevel !== 'silent',
  ...(process.env.BENCH_RATE_LIMITER === 'memory'
    ? {
        policies: {
          rateLimiter: new MemoryRateLimiter({
            max: config.rateLimitMax,
            windowSeconds: config.rateLimitWindowSeconds,
          }),
        },
      }
    : {}),
});
const address = await server.app.listen({ port: 0, host: '127.0.0.1' });
process.send?.({ ready: Number(new URL(address).port) });
answerMemoryProbes();
process.on('SIGTERM', () => {
  void server.close().then(() => process.exit(0));
});
