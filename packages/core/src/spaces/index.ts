export * from './create-space';
export * from './get-space';
export * from './views';
