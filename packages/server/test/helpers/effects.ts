import type { FastifyInstance } from 'fastify';

/**
 * Test-only write routes whose side effect a test can count exactly: each execution of
 * `/test/effect/:name` bumps the count of its name. `{ status }` in the body picks the answer
 * (5xx throws); `hold(name)` keeps executions of that name running until released. Register
 * with `startTestServer({ routes: effects.register })`.
 */
export function effectRoutes() {
  const runs = new Map<string, number>();
  const gates = new Map<
    string,
    { entered: Promise<void>; enter: () => void; open: Promise<void>; release: () => void }
  >();
  const hold = (name: string) => {
    let enter!: () => void;
    let release!: () => void;
    const gate = {
      entered: new Promise<void>((r) => {
        enter = r;
      }),
      open: new Promise<void>((r) => {
        release = r;
      }),
      enter: () => enter(),
      release: () => release(),
    };
    gates.set(name, gate);
    return gate;
  };
  const register = (app: FastifyInstance) => {
    app.route({
      method: ['POST', 'PUT', 'PATCH', 'DELETE'],
      url: '/test/effect/:name',
      handler: async (request, reply) => {
        const { name } = request.params as { name: string };
        const n = (runs.get(name) ?? 0) + 1;
        runs.set(name, n);
        const gate = gates.get(name);
        if (gate) {
          gate.enter();
          await gate.open;
        }
        const status = Number((request.body as { status?: number } | undefined)?.status ?? 201);
        if (status >= 500) throw new Error('failed on purpose');
        return reply
          .code(status)
          .header('Location', `/things/${name}/${n}`)
          .header('X-Effect', String(n))
          .send(status >= 400 ? { error: `refused on purpose (${n})` } : { name, n, method: request.method });
      },
    });
  };
  return { register, runs: (name: string) => runs.get(name) ?? 0, hold };
}
