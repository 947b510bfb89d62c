import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, joinAs } from './helpers/cli';
import { freePort, serverForFile } from './helpers/server';

// The receiver runs on this machine, which a server refuses to push to unless its operator allows it.
// One immediate retry, then a failing webhook is disabled (WEBHOOK_RETRY_DELAYS_S).
const file = serverForFile({ WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_DELAYS_S: '0' });

/** A receiver of deliveries on this machine: the payloads it was sent, in order. */
let receiver: Server;
let hook: string;
let failing: string;
const received: { type: string; data: { content?: string; senderName?: string } }[] = [];
beforeAll(async () => {
  const port = await freePort();
  receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      // /failing refuses every delivery.
      if (request.url === '/failing') return void response.writeHead(500).end();
      received.push(JSON.parse(body));
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(port, '127.0.0.1', resolve));
  hook = `http://127.0.0.1:${port}/hook`;
  failing = `http://127.0.0.1:${port}/failing`;
});
afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

describe('webhook deliveries', () => {
  it('pushes the others’ messages to a participant’s webhook, never the participant’s own (as the README says)', async () => {
    const owner = file.user();
    const guest = file.user();
    await owner.run(['space', 'create', 'Hooks', '--owner-name', 'Olga']);
    await joinAs(owner, guest, 'Gus');
    expect((await guest.run(['webhook', 'add', hook, '-q'])).code).toBe(0);

    expect((await owner.run(['send', 'from the owner'])).code).toBe(0);
    expect((await guest.run(['send', 'from Gus himself'])).code).toBe(0);
    expect((await owner.run(['send', '@Gus the last one'])).code).toBe(0);
    const messages = () =>
      received
        .filter((d) => d.type === 'message' || d.type === 'mention')
        .map((d) => [d.type, d.data.content]);
    await eventually(() => expect(messages()).toContainEqual(['mention', '@Gus the last one']));
    // One more, sent once those arrived: the worker sends a batch before it claims the next, so
    // Gus's own message, had it been queued, would have arrived by the time this one does.
    expect((await owner.run(['send', 'closing'])).code).toBe(0);
    await eventually(() => expect(messages()).toContainEqual(['message', 'closing']));
    expect(messages()).toHaveLength(3);
    expect(messages()).toEqual(
      expect.arrayContaining([
        ['message', 'from the owner'],
        ['mention', '@Gus the last one'],
        ['message', 'closing'],
      ]),
    );
  });

  it('adds a webhook again at the URL of one of yours that delivery disabled (only an enabled one is refused)', async () => {
    const owner = file.user();
    const guest = file.user();
    await owner.run(['space', 'create', 'Failing', '--owner-name', 'Olga']);
    await joinAs(owner, guest, 'Gus');
    expect((await guest.run(['webhook', 'add', failing, '-q'])).code).toBe(0);
    expect((await guest.run(['webhook', 'add', failing])).code).toBe(6);
    expect((await owner.run(['send', 'to a receiver that fails'])).code).toBe(0);
    await eventually(async () =>
      expect((await guest.run(['webhook', 'list', '--json'])).json()).toEqual([
        expect.objectContaining({ url: failing, enabled: false }),
      ]),
    );
    const again = await guest.run(['webhook', 'add', failing, '--json']);
    expect(again.code).toBe(0);
    expect(again.json()).toMatchObject({ url: failing, enabled: true });
  });
});
