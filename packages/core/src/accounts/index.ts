export * from './resolve-user-token';
