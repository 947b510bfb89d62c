import { type SQL, sql } from 'drizzle-orm';
import { customType, index, jsonb, pgTable, text } from 'drizzle-orm/pg-core';

const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });

/**
 * The service's own documentation as /ask searches it: one row per API operation and per section
 * of the guides. Service-level, not space-scoped. Each node writes the set it serves when it first
 * answers /ask (replacing rows whose `hash` changed and removing rows it no longer has).
 */
export const askDocuments = pgTable(
  'ask_documents',
  {
    /** Stable id: `operation:<operationId>` or `guide:<file>#<section slug>`. */
    id: text('id').primaryKey(),
    kind: text('kind', { enum: ['operation', 'guide'] }).notNull(),
    /** Path under PUBLIC_URL (with a fragment); made absolute when answering. */
    path: text('path').notNull(),
    name: text('name').notNull(),
    description: text('description').notNull(),
    body: text('body').notNull(),
    /** Kind-specific fields the answer's schema.org object is built from (method, path template…). */
    data: jsonb('data').notNull().$type<Record<string, unknown>>(),
    /** SHA-256 of the row's content, so an unchanged document is not rewritten. */
    hash: text('hash').notNull(),
    /** Weighted full-text vector: name (A), description (B), body (C). */
    search: tsvector('search')
      .notNull()
      .generatedAlwaysAs(
        (): SQL =>
          sql`setweight(to_tsvector('english', ${askDocuments.name}), 'A') || setweight(to_tsvector('english', ${askDocuments.description}), 'B') || setweight(to_tsvector('english', ${askDocuments.body}), 'C')`,
      ),
  },
  (t) => [index('ask_documents_search_idx').using('gin', t.search)],
);
