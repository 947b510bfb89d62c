// Information only: Convene's own sendMessage work (the core use case, its one prepared
// statement and NOTIFY) in a bare Fastify route, without the HTTP policy hooks or tRPC. It shows
// how much of the real route's cost is the message path itself.

import { ZCreateSpaceRequest, ZSendMessageRequest } from '@convene/contract';
import {
  createNotifyBus,
  createSpace,
  type Deps,
  defaultCoreConfig,
  EVENTS_CHANNEL,
  openDatabase,
  Sealer,
  SecretBox,
  sendMessage,
  systemClock,
} from '@convene/core';
import Fastify from 'fastify';

const database = await openDatabase({ url: process.env.DATABASE_URL! });
const deps = {
  db: database.db,
  clock: systemClock,
  box: new Sealer(new SecretBox('bench-secret-0123456789abcdef')),
  events: createNotifyBus(database),
  config: defaultCoreConfig,
} as unknown as Deps;
// A listener, as every real node has, so NOTIFY costs what it costs in production.
const unlisten = await database.listen(EVENTS_CHANNEL, () => {});

const app = Fastify({ logger: false });
app.post('/hub/space', async (request) =>
  createSpace({ deps, input: ZCreateSpaceRequest.parse(request.body) }),
);
app.post('/hub/space/:spaceId/messages', async (request) => {
  const { spaceId, content, type } = ZSendMessageRequest.parse({
    ...(request.body as object),
    spaceId: (request.params as { spaceId: string }).spaceId,
  });
  return sendMessage({
    deps,
    spaceId,
    key: request.headers['x-private-key'] as string,
    input: { content, type },
  });
});
const address = await app.listen({ port: 0, host: '127.0.0.1' });
process.send?.({ ready: Number(new URL(address).port) });
process.on('SIGTERM', () => {
  void app
    .close()
    .then(unlisten)
    .then(() => database.close())
    .then(() => process.exit(0));
});
