export * from './api';
export * from './auth-checks';
export * from './factories';
export * from './harness';
