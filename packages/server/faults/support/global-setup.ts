import type { TestProject } from 'vitest/node';
import { postgresScript } from './postgres-script';

/**
 * The fault suite runs on a PostgreSQL server of its own, since it restarts it: started here on
 * FAULTS_PG_PORT (default 25434) with scripts/test-postgres.sh, and stopped at the end.
 */
export default async function setup(project: TestProject) {
  const port = Number(process.env.FAULTS_PG_PORT ?? 25434);
  const url = await postgresScript('start', port);
  project.provide('postgresUrl', url);
  project.provide('postgresPort', port);
  return async () => {
    await postgresScript('stop', port);
  };
}
