import { createHash } from 'node:crypto';
import { notInArray, sql } from 'drizzle-orm';
import { askDocuments } from '../db/schema';
import type { Db } from '../db/types';

/** One searchable piece of the service's documentation: an API operation or a guide section. */
export interface AskDocument {
  /** Stable id: `operation:<operationId>` or `guide:<file>#<slug>`. */
  id: string;
  kind: 'operation' | 'guide';
  /** Path under PUBLIC_URL, with a fragment where it points into a page. */
  path: string;
  name: string;
  description: string;
  body: string;
  /**
   * Operations: `{ operationId, method, pathTemplate, tool }`; guides: `{ guide, section }`.
   * The answer's schema.org object is built from these.
   */
  data: Record<string, unknown>;
}

export interface IndexAskDocumentsOptions {
  db: Db;
  documents: AskDocument[];
}

/** Serialises concurrent re-indexing by several nodes sharing one database. */
const INDEX_LOCK = 0x61736b; // "ask"

/**
 * Makes the stored documentation exactly `documents`: rewrites changed rows, adds new ones and
 * removes the rest, in one transaction so a concurrent /ask sees the old set or the new one.
 */
export async function indexAskDocuments({ db, documents }: IndexAskDocumentsOptions): Promise<void> {
  const rows = documents.map((d) => ({ ...d, hash: hashOf(d) }));
  await db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${INDEX_LOCK})`);
    const ids = rows.map((r) => r.id);
    if (ids.length > 0) await tx.delete(askDocuments).where(notInArray(askDocuments.id, ids));
    else await tx.delete(askDocuments);
    for (let i = 0; i < rows.length; i += 100) {
      await tx
        .insert(askDocuments)
        .values(rows.slice(i, i + 100))
        .onConflictDoUpdate({
          target: askDocuments.id,
          set: {
            kind: sql`excluded.kind`,
            path: sql`excluded.path`,
            name: sql`excluded.name`,
            description: sql`excluded.description`,
            body: sql`excluded.body`,
            data: sql`excluded.data`,
            hash: sql`excluded.hash`,
          },
          setWhere: sql`${askDocuments.hash} <> excluded.hash`,
        });
    }
  });
}

function hashOf(d: AskDocument): string {
  return createHash('sha256')
    .update(JSON.stringify([d.kind, d.path, d.name, d.description, d.body, d.data]))
    .digest('hex');
}
