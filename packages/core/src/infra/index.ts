// Ports of the HTTP policies (rate limits, idempotency) with their database and in-memory
// implementations; the server composes them.
export * from './health-check';
export * from './idempotency-store';
export * from './rate-limiter';
export * from './reseal-secrets';
export * from './sealer';
export * from './within';
export * from './work-gate';
