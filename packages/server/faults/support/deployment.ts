import { afterAll, beforeAll } from 'vitest';
import { type ConveneNode, type NodeOptions, startNode } from './nodes';
import { freshDatabase } from './postgres';

export interface Deployment {
  /** The deployment's database, fresh for the describe block. */
  readonly databaseUrl: string;
  /** Starts a node on the deployment's database; every node started is stopped after the block. */
  start(options?: NodeOptions): Promise<ConveneNode>;
}

/**
 * A deployment for a describe block: a fresh database on the suite's PostgreSQL server and the
 * nodes started on it, stopped (those still running) and the database dropped after the block.
 */
export function useDeployment(): Deployment {
  const nodes: ConveneNode[] = [];
  let database: Awaited<ReturnType<typeof freshDatabase>> | undefined;
  beforeAll(async () => {
    database = await freshDatabase();
  });
  afterAll(async () => {
    await Promise.all(nodes.map((node) => node.stop()));
    await database?.drop();
  });
  return {
    get databaseUrl() {
      if (!database) throw new Error('the deployment is made in beforeAll');
      return database.url;
    },
    async start(options) {
      const node = await startNode(this.databaseUrl, options);
      nodes.push(node);
      return node;
    },
  };
}
