import { sql } from 'drizzle-orm';
import { index, integer, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';

export const artifacts = pgTable(
  'artifacts',
  {
    spaceId: uuid('space_id').notNull(),
    id: uuid('id').notNull(),
    name: text('name').notNull(),
    type: text('type', { enum: ['markdown'] }).notNull(),
    content: text('content').notNull(),
    version: integer('version').notNull(),
    createdBy: uuid('created_by').notNull(),
    updatedBy: uuid('updated_by').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull(),
    /** Lock holder; the lock is free when null or when lockExpiresAt has passed (checked at use). */
    lockedBy: uuid('locked_by'),
    lockedAt: timestamp('locked_at', { withTimezone: true, precision: 3 }),
    lockExpiresAt: timestamp('lock_expires_at', { withTimezone: true, precision: 3 }),
  },
  (t) => [
    primaryKey({ columns: [t.spaceId, t.id] }),
    // The expiry sweep's way to the locks that lapsed (releaseExpiredLocks): held locks only.
    index('artifacts_lock_expires_at_idx').on(t.lockExpiresAt).where(sql`${t.lockedBy} is not null`),
  ],
);

/** Every version ever written, the first included: history never loses a word. */
export const artifactVersions = pgTable(
  'artifact_versions',
  {
    spaceId: uuid('space_id').notNull(),
    artifactId: uuid('artifact_id').notNull(),
    version: integer('version').notNull(),
    content: text('content').notNull(),
    updatedBy: uuid('updated_by').notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.spaceId, t.artifactId, t.version] })],
);
