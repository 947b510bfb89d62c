// MCP sessions and resource subscriptions, kept in the database so any node serves any session.

export * from './resources';
export * from './sessions';
