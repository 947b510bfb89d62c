// Agent-facing discovery: natural-language search (/ask) and agent cards.
export * from './ask';
export * from './get-agent-card';
export * from './index-ask-documents';
