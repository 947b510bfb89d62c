import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a server that can freeze its open connections: they stay open but
 * nothing more reaches the client, as with a half-open connection after a network fault.
 * Connections made after the freeze pass normally.
 */
export interface FreezingProxy {
  url: string;
  connections: number;
  freeze(): void;
  close(): Promise<void>;
}

export async function freezingProxy(target: string): Promise<FreezingProxy> {
  const { hostname, port } = new URL(target);
  const open = new Set<{ client: Socket; upstream: Socket; frozen: boolean }>();
  const state = { connections: 0 };
  const server: Server = createServer((client) => {
    state.connections++;
    const upstream = connect(Number(port), hostname);
    const pair = { client, upstream, frozen: false };
    open.add(pair);
    client.on('data', (chunk) => upstream.write(chunk));
    upstream.on('data', (chunk) => {
      if (!pair.frozen) client.write(chunk);
    });
    const end = () => {
      open.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end);
    upstream.on('close', end);
    client.on('error', end);
    upstream.on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    get connections() {
      return state.connections;
    },
    freeze() {
      for (const pair of open) pair.frozen = true;
    },
    async close() {
      for (const pair of open) {
        pair.client.destroy();
        pair.upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
