// Use cases of this domain; each file exports one.

export * from './ack-inbox';
export * from './get-inbox';
export * from './unread';
