import type { StoredResponse } from '@convene/core';
import type { FastifyInstance } from 'fastify';
import { readsConfig } from '../../src/http/client';
import { errorBody } from '../../src/http/error-body';
import { guardOf, sendReplay } from '../../src/http/idempotency';
import type { ConveneServer } from '../../src/server';

/**
 * Test-only write routes whose side effect a test can count exactly: each execution of
 * `/test/effect/:name` bumps the count of its name. `{ status }` in the body picks the answer
 * (5xx throws); `hold(name)` keeps executions of that name running until released. Register
 * with `startTestServer({ routes: effects.register })`. A write made with an Idempotency-Key runs
 * as every real write does: in the transaction of its record (GuardedRequest.run).
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
  const register = (app: FastifyInstance, server: ConveneServer) => {
    app.route({
      method: ['POST', 'PUT', 'PATCH', 'DELETE'],
      url: '/test/effect/:name',
      // A keyed write, as the API's are: its key is its client for the rate limit.
      config: readsConfig(['spaceKey', 'userToken', 'dashboardJwt']),
      handler: async (request, reply) => {
        const { name } = request.params as { name: string };
        const hold = async () => {
          const gate = gates.get(name);
          if (gate) {
            gate.enter();
            await gate.open;
          }
        };
        // On PostgreSQL a held write holds its transaction open, as a slow write does. PGlite has
        // one connection: a transaction held open there stops every query of the server (a real
        // write never waits on anything but the database), so a write is held before it begins.
        const holdInTransaction = server.database.engine === 'postgres';
        const effect = async (): Promise<StoredResponse> => {
          const n = (runs.get(name) ?? 0) + 1;
          runs.set(name, n);
          if (holdInTransaction) await hold();
          const status = Number((request.body as { status?: number } | undefined)?.status ?? 201);
          if (status >= 500) throw new Error('failed on purpose');
          const body =
            status >= 400
              ? errorBody(status, `refused on purpose (${n})`)
              : { name, n, method: request.method };
          return {
            status,
            headers: {
              'content-type': 'application/json; charset=utf-8',
              location: `/things/${name}/${n}`,
              'x-effect': String(n),
            },
            body: JSON.stringify(body),
          };
        };
        if (!holdInTransaction) await hold();
        const guarded = guardOf(request);
        if (!guarded) return send(reply, await effect());
        const outcome = await guarded.run(
          server.database.db,
          async () => {
            const response = await effect();
            return { value: response, response };
          },
          () => undefined,
        );
        return 'replay' in outcome ? sendReplay(reply, outcome.replay) : send(reply, outcome.value);
      },
    });
  };
  return { register, runs: (name: string) => runs.get(name) ?? 0, hold };
}

const send = (reply: import('fastify').FastifyReply, response: StoredResponse) =>
  reply.code(response.status).headers(response.headers).send(response.body);
