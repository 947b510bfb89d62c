export * from './release-locks';
