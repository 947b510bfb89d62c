export * from './api';
export * from './auth-checks';
export * from './effects';
export * from './factories';
export * from './fixture';
export * from './harness';
export * from './sdk';
