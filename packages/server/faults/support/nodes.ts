import { readFileSync } from 'node:fs';
import { freePort } from '../../test/helpers/harness';
import { type ServerProcess, spawnServer } from '../../test/helpers/process';

/** What every node of a deployment shares besides its database. */
const SHARED_SECRET = 'fault-suite-secret-0123456789';

export interface NodeOptions {
  /** Listen here (a restarted node keeps its port); a free port otherwise. */
  port?: number;
  /** PUBLIC_URL; the listening URL otherwise. */
  publicUrl?: string;
  env?: Record<string, string>;
}

/** A server node: the real entry point (`pnpm start`) in a process of its own. */
export interface ConveneNode {
  /** Where it listens. */
  url: string;
  port: number;
  pid: number;
  /** Everything it printed. */
  output(): string;
  /** Resident set size now, from /proc (Linux). */
  rssBytes(): number;
  /** SIGKILL: no shutdown, no goodbye to PostgreSQL or to its clients. */
  kill9(): Promise<void>;
  /** SIGTERM, as a deployment stops a node. */
  stop(): Promise<void>;
}

export async function startNode(databaseUrl: string, options: NodeOptions = {}): Promise<ConveneNode> {
  const port = options.port ?? (await freePort());
  const proc: ServerProcess = spawnServer({
    DATABASE_URL: databaseUrl,
    PORT: String(port),
    SECRET: SHARED_SECRET,
    RATE_LIMIT_MAX: '1000000',
    LOG_LEVEL: 'warn',
    ...(options.publicUrl ? { PUBLIC_URL: options.publicUrl } : {}),
    ...options.env,
  });
  const url = await proc.ready;
  const pid = proc.child.pid!;
  return {
    url,
    port,
    pid,
    output: proc.output,
    rssBytes() {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      return Number(status.match(/^VmRSS:\s+(\d+) kB/m)?.[1] ?? 0) * 1024;
    },
    async kill9() {
      await proc.stop('SIGKILL');
    },
    async stop() {
      await proc.stop('SIGTERM');
    },
  };
}
