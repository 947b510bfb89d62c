export * from './artifacts';
export * from './infra';
export * from './invitations';
export * from './messages';
export * from './participants';
export * from './space-events';
export * from './spaces';
export * from './users';
