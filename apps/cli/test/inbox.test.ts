import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, finished, User } from './helpers/cli';
import { startServer, type TestServer } from './helpers/server';

let server: TestServer;
let owner: User;
let guest: User;

beforeAll(async () => {
  server = await startServer();
  owner = new User(server.url);
  guest = new User(server.url);
  await owner.run(['space', 'create', 'Desk', '--owner-name', 'Olga']);
  const { humanLink } = (await owner.run(['invite', '--json'])).json();
  expect((await guest.run(['join', humanLink, '--name', 'Gus'])).code).toBe(0);
});
afterAll(async () => {
  await server?.close();
  owner?.remove();
  guest?.remove();
});

describe('send --mention, --reply-to and inbox', () => {
  it('addresses messages, lists the inbox and acknowledges it', async () => {
    const first = (await owner.run(['send', 'What do you think?', '-q'])).stdout.trim();
    expect((await guest.run(['send', 'for the owner', '--mention', 'olga'])).code).toBe(0);
    expect((await guest.run(['send', 'an answer', '--reply-to', first])).code).toBe(0);
    expect((await guest.run(['send', 'not for anyone'])).code).toBe(0);
    const nobody = await guest.run(['send', 'x', '--mention', 'Nobody']);
    expect(nobody.code).toBe(2);
    expect(nobody.stderr).toContain('nobody called "Nobody"');

    const listed = (await owner.run(['inbox', '--json'])).json();
    expect(listed.messages.map((m: any) => m.content)).toEqual(['for the owner', 'an answer']);
    expect(listed.unread).toEqual({ inbox: 2, mentions: 1, replies: 1, messages: 4 });
    const human = await owner.run(['inbox']);
    expect(human.stdout).toContain('Gus: for the owner');
    expect(human.stderr).toContain('2 unread for you');

    const acked = (await owner.run(['inbox', '--ack', '--json'])).json();
    expect(acked).toMatchObject({ lastReadSeq: 3, unread: { inbox: 0 } });
    const after = await owner.run(['inbox']);
    expect(after.stderr).toContain('Nothing new for you.');
    expect((await owner.run(['inbox', '--wait', '61'])).code).toBe(2);
  });

  it('follows the inbox, one JSON message per line, acknowledging each', async () => {
    const child = owner.spawn(['inbox', '--follow', '--json']);
    const result = finished(child, { timeoutMs: 60_000 });
    let out = '';
    child.stdout?.on('data', (chunk) => {
      out += chunk;
    });
    expect((await guest.run(['send', '@Olga are you there?'])).code).toBe(0);
    await eventually(() => expect(out).toContain('are you there?'));
    expect(JSON.parse(out.trim().split('\n')[0]!)).toMatchObject({ content: '@Olga are you there?' });
    child.kill('SIGINT');
    expect((await result).code).toBe(0);
  });
});
