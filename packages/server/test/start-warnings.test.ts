// What a server says at start about a configuration that is most likely a mistake, and the one
// warning a request can bring (X-Forwarded-For while TRUST_PROXY is off): trial s26, finding 11.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/env';
import { FETCH_BAD_PORTS, isLoopbackHost, startWarnings } from '../src/start-warnings';
import { withServer } from './helpers';

interface LogLine {
  level: number;
  msg: string;
  reqId?: string;
}
const logOf = (lines: string[]): LogLine[] => lines.map((line) => JSON.parse(line) as LogLine);

describe('start warnings', () => {
  const warnings = (env: Record<string, string>) => startWarnings(loadConfig(env));

  it('say nothing of the defaults, or of a server reached at its public https address', () => {
    expect(warnings({})).toEqual([]);
    expect(warnings({ DATABASE_URL: 'memory://' })).toEqual([]);
    expect(warnings({ HOST: '0.0.0.0', PUBLIC_URL: 'https://convene.example.com' })).toEqual([]);
    expect(warnings({ HOST: '::1', PUBLIC_URL: 'http://localhost:3000' })).toEqual([]);
  });

  it('say when the server takes other machines’ connections but hands out links to localhost', () => {
    for (const host of ['0.0.0.0', '::', '10.1.2.3', 'convene.internal'])
      for (const env of [{}, { PUBLIC_URL: 'http://127.0.0.1:8080' }]) {
        const said = warnings({ HOST: host, ...env });
        expect(said, host).toHaveLength(1);
        expect(said[0]).toMatch(
          new RegExp(`^HOST=${host.replace(/\./g, '\\.')} takes connections from other machines`),
        );
        expect(said[0]).toContain('set PUBLIC_URL to the address people reach it by');
      }
  });

  it('say when keys would cross a network in clear (a public URL on plain http)', () => {
    expect(warnings({ PUBLIC_URL: 'http://convene.example.com' })).toEqual([
      'PUBLIC_URL http://convene.example.com is plain http: keys and tokens cross the network in clear; ' +
        'serve it over HTTPS (a proxy that terminates TLS) and set PUBLIC_URL to its https:// address',
    ]);
  });

  it('say when PUBLIC_URL has a path, which the pages and OAuth discovery do not honour', () => {
    expect(warnings({ PUBLIC_URL: 'https://x.example/convene' })).toEqual([
      'PUBLIC_URL https://x.example/convene has a path (/convene), which the links this server hands out carry, ' +
        'but the server answers at the root: its web pages load their files and call the API at https://x.example/web/… ' +
        'and https://x.example/hub/…, and OAuth clients look for its metadata at https://x.example/.well-known/…, ' +
        'outside the path, so behind a proxy that strips it they fail; give Convene a host name of its own ' +
        '(https://convene.example.com)',
    ]);
    // A trailing slash is no path; one with a slash after it is.
    expect(warnings({ PUBLIC_URL: 'https://x.example/' })).toEqual([]);
    expect(warnings({ PUBLIC_URL: 'https://x.example:8443' })).toEqual([]);
    expect(warnings({ PUBLIC_URL: 'https://x.example/a/b/' })[0]).toMatch(
      /^PUBLIC_URL https:\/\/x\.example\/a\/b has a path \(\/a\/b\)/,
    );
  });

  it('say when a variable is a slip of a setting, which is ignored, naming the one meant', () => {
    expect(warnings({ DATABSE_URL: 'postgres://db/convene' })).toEqual([
      'DATABSE_URL is set, which is no setting of Convene and is ignored: did you mean DATABASE_URL? (DATABASE_URL is unset: this node keeps its data in an embedded database under DATA_DIR)',
    ]);
    expect(warnings({ PUBLICURL: 'https://x.example', SHUTDOWN_DRAIN: '5', SECERT: 'x'.repeat(20) })).toEqual(
      [
        'PUBLICURL is set, which is no setting of Convene and is ignored: did you mean PUBLIC_URL?',
        'SHUTDOWN_DRAIN is set, which is no setting of Convene and is ignored: did you mean SHUTDOWN_DRAIN_S?',
        'SECERT is set, which is no setting of Convene and is ignored: did you mean SECRET?',
      ],
    );
    // A machine's own variables, and those of other programs, are nobody's slip.
    expect(
      warnings({
        PATH: '/usr/bin',
        HOME: '/root',
        HOSTNAME: 'node-a',
        PGPORT: '5432',
        NODE_ENV: 'production',
        TEST_DATABASE_URL: 'postgres://x',
        CONVENE_URL: 'http://localhost:3000',
      }),
    ).toEqual([]);
  });

  it('say when a server other machines use keeps nothing (memory://)', () => {
    const said = warnings({ HOST: '0.0.0.0', PUBLIC_URL: 'https://x.example', DATABASE_URL: 'memory://' });
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/^DATABASE_URL=memory:\/\/ keeps nothing, yet HOST=0\.0\.0\.0/);
  });

  it('say when people would reach it on a port browsers and fetch refuse (6000, 10080)', () => {
    for (const env of [{ PORT: '6000' }, { PUBLIC_URL: 'http://localhost:10080' }]) {
      const said = warnings(env);
      expect(said, JSON.stringify(env)).toHaveLength(1);
      expect(said[0]).toMatch(
        /^PUBLIC_URL http:\/\/localhost:(6000|10080) is on port (6000|10080), which browsers/,
      );
      expect(said[0]).toContain('Choose another port');
    }
    // Behind a proxy on 443, the port the server listens on is nobody's business but the proxy's.
    expect(warnings({ PORT: '6000', PUBLIC_URL: 'https://convene.example.com' })).toEqual([]);
    expect(warnings({ PORT: '6001' })).toEqual([]);
  });

  it('know the bad ports as Node’s own fetch does', async () => {
    // fetch refuses a bad port before it connects ("bad port"); any other port on 127.0.0.1 is
    // tried, and refused by the system, or answered. Every listed port, and the ports around them.
    const refusedByFetch = async (port: number) =>
      fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2000) }).then(
        () => false,
        (error: Error) => (error.cause as Error | undefined)?.message === 'bad port',
      );
    const ports = new Set<number>();
    for (const port of FETCH_BAD_PORTS) for (const p of [port - 1, port, port + 1]) if (p > 0) ports.add(p);
    for (const port of ports)
      expect(await refusedByFetch(port), String(port)).toBe(FETCH_BAD_PORTS.has(port));
  });

  it('know loopback names and addresses', () => {
    for (const host of ['localhost', 'LOCALHOST', 'app.localhost', '127.0.0.1', '127.1.2.3', '::1', '[::1]'])
      expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.0.0.1', '128.0.0.1', 'example.com', 'localhost.example.com'])
      expect(isLoopbackHost(host), host).toBe(false);
  });

  it('are logged at start as warnings in the logger’s shape', async () => {
    const lines: string[] = [];
    await withServer(
      // The harness listens on loopback whatever HOST says; the warning is about the setting.
      {
        config: { host: '0.0.0.0', logLevel: 'warn' },
        logStream: { write: (line) => void lines.push(line) },
      },
      async () => {
        const warned = logOf(lines).filter((l) => l.msg.startsWith('HOST=0.0.0.0 takes connections'));
        expect(warned).toHaveLength(1);
        expect(warned[0]).toMatchObject({ level: 40, pid: process.pid });
      },
    );
  });
});

describe('X-Forwarded-For while TRUST_PROXY is off', () => {
  const forwarded = { headers: { 'X-Forwarded-For': '203.0.113.7' } };
  const said = (lines: string[]) => logOf(lines).filter((l) => l.msg.includes('TRUST_PROXY is off'));

  it('is said once per process, with the request that brought it', async () => {
    const lines: string[] = [];
    await withServer(
      { config: { logLevel: 'warn' }, logStream: { write: (line) => void lines.push(line) } },
      async ({ h }) => {
        await h.get('/api/health');
        expect(said(lines)).toEqual([]);
        const first = await h.get('/api/health', forwarded);
        await h.get('/api/health', forwarded);
        await expect.poll(() => said(lines)).toHaveLength(1);
        expect(said(lines)[0]).toMatchObject({ level: 40, reqId: first.headers.get('request-id') });
        expect(said(lines)[0]!.msg).toContain("counts as the proxy's address (127.0.0.1)");
        expect(said(lines)[0]!.msg).toContain('set TRUST_PROXY to how many');
      },
    );
  });

  it('is not said when TRUST_PROXY is set', async () => {
    const lines: string[] = [];
    await withServer(
      { config: { logLevel: 'warn', trustProxy: 1 }, logStream: { write: (line) => void lines.push(line) } },
      async ({ h }) => {
        await h.get('/api/health', forwarded);
        await h.get('/api/health');
        expect(said(lines)).toEqual([]);
      },
    );
  });
});
