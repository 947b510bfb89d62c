// Use cases of this domain; each file exports one.

export * from '../events/read-events';
export * from '../events/stream-lease';
export * from '../events/stream-slots';
export * from './get-message-thread';
export * from './list-messages';
export * from './open-stream';
export * from './send-message';
export * from './views';
