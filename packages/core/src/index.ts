// Each domain keeps its own barrel; add exports there, not here.
export * from './accounts';
export * from './artifacts';
export * from './ask';
export * from './auth/authorize';
export * from './auth/live-credential';
export * from './clock';
export * from './db';
export * from './deps';
export * from './errors';
export * from './events/append-event';
export * from './events/event-bus';
export * from './ids';
export * from './infra';
export * from './messages';
export * from './participants';
export * from './secrets';
export * from './spaces';
