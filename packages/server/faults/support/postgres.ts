import { createPostgresTestDatabase } from '@convene/core/testing';
import { inject } from 'vitest';
import { postgresScript } from './postgres-script';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The fault suite's own PostgreSQL server (global-setup.ts), which tests may restart. */
    postgresUrl: string;
    postgresPort: number;
  }
}

/** A fresh, empty database on the suite's server; each node started on it migrates it. */
export const freshDatabase = () => createPostgresTestDatabase(inject('postgresUrl'));

/** Stops the suite's PostgreSQL (fast: every session ends), leaves it down, starts it again. */
export const restartPostgres = (downSeconds: number) =>
  postgresScript('restart', inject('postgresPort'), String(downSeconds));
