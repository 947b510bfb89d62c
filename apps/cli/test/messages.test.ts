import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinAs, User } from './helpers/cli';
import { startServer, type TestServer } from './helpers/server';

let server: TestServer;
let owner: User;
let guest: User;
let spaceId: string;

beforeAll(async () => {
  server = await startServer();
  owner = new User(server.url);
  guest = new User(server.url);
  spaceId = (await owner.run(['space', 'create', 'Chat', '--json'])).json().spaceId;
  await joinAs(owner, guest, 'Guest');
});
afterAll(async () => {
  await server?.close();
  owner?.remove();
  guest?.remove();
});

describe('send', () => {
  it('sends text from an argument, from stdin (-), from a file, as html and as an image', async () => {
    const sent = await guest.run(['send', 'hello there', '--json']);
    expect(sent.code).toBe(0);
    const body = sent.json();
    expect(body.messageId).toMatch(/^[0-9a-f-]{36}$/);
    // The API's own answer, context bundle included.
    expect(body.participants.map((p: any) => p.name)).toContain('Guest');

    expect((await guest.run(['send', '-'], { input: 'line one\nline two\n' })).code).toBe(0);
    const file = join(guest.home, 'note.html');
    writeFileSync(file, '<p>from a <b>file</b></p>\n');
    expect((await guest.run(['send', '--file', file, '--html'])).code).toBe(0);
    expect(
      (await guest.run(['send', '--image', 'https://example.com/chart.png', '-q'])).stdout.trim(),
    ).toMatch(/^[0-9a-f-]{36}$/);
    // Naming the space first.
    expect((await owner.run(['send', 'Chat', 'owner speaking'])).code).toBe(0);

    const messages = (await owner.run(['messages', '--json'])).json();
    expect(messages.map((m: any) => [m.senderName, m.type, m.content])).toEqual([
      ['Guest', 'text', 'hello there'],
      ['Guest', 'text', 'line one\nline two'],
      ['Guest', 'html', '<p>from a <b>file</b></p>'],
      ['Guest', 'image', 'https://example.com/chart.png'],
      [expect.any(String), 'text', 'owner speaking'],
    ]);
    expect(messages[4].isOwner).toBe(true);
  });

  it('explains bad input: no text, too many words, --html with --image, a bad image, a missing file', async () => {
    const none = await guest.run(['send']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('Usage: convene send');
    const words = await guest.run(['send', 'hello', 'big', 'world']);
    expect(words.code).toBe(2);
    expect(words.stderr).toContain('Quote text with spaces');
    const both = await guest.run(['send', '--html', '--image', 'https://x.y/z.png']);
    expect(both.code).toBe(2);
    const image = await guest.run(['send', '--image', 'http://insecure.example/x.png']);
    // Refused by the server as invalid: a usage error, pointing at the command's help.
    expect(image.code).toBe(2);
    expect(image.stderr).toContain('https:');
    expect(image.stderr).toContain('See `convene send --help`.');
    const missing = await guest.run(['send', '--file', join(guest.home, 'nope.txt')]);
    expect(missing.code).toBe(5);
    expect(missing.stderr).toContain('no such file');
    const directory = await guest.run(['send', '--file', guest.home]);
    expect(directory.code).toBe(1);
    expect(directory.stderr).toContain(`cannot open ${guest.home}: it is a directory`);
    expect(directory.stderr).toContain('Check the path');
    const unknownSpace = await guest.run(['send', 'Nowhere', 'hi']);
    expect(unknownSpace.code).toBe(4);
    expect(unknownSpace.stderr).toContain('no key for space "Nowhere"');
  });
});

describe('messages', () => {
  it('prints messages as text, keeps the last --limit, and starts after --since', async () => {
    const text = await owner.run(['messages']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/Guest: hello there/);
    expect(text.stdout).toMatch(/Guest: line one\n\s+line two/);
    expect(text.stdout).toMatch(/Guest: \[image\] https:\/\/example\.com\/chart\.png/);

    const last2 = (await owner.run(['messages', '--limit', '2', '--json'])).json();
    expect(last2.map((m: any) => m.content)).toEqual(['https://example.com/chart.png', 'owner speaking']);

    const all = (await owner.run(['messages', '--json'])).json();
    const since = (await owner.run(['messages', '--since', all[2].timestamp, '--json'])).json();
    expect(since.map((m: any) => m.id)).toEqual(all.slice(3).map((m: any) => m.id));
    const recent = (await owner.run(['messages', '--since', '1h', '--json'])).json();
    expect(recent).toHaveLength(all.length);
    const ids = (await owner.run(['messages', '-q'])).stdout.trim().split('\n');
    expect(ids).toEqual(all.map((m: any) => m.id));

    const fromYesterday = (await owner.run(['messages', '--since', 'yesterday', '--json'])).json();
    expect(fromYesterday).toHaveLength(all.length);
    const bad = await owner.run(['messages', '--since', 'last week']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--since takes a duration back from now');
    const badLimit = await owner.run(['messages', '--limit', 'x']);
    expect(badLimit.code).toBe(2);
  });

  it('pages through more messages than one API page holds', async () => {
    const room = new User(server.url);
    try {
      await room.run(['space', 'create', 'Busy']);
      const key = room.credentials().hosts[server.url].spaces;
      const [space] = Object.values(key) as any[];
      // 520 messages straight through the API (faster than 520 processes); the CLI pages them.
      for (let i = 0; i < 520; i += 40) {
        await Promise.all(
          Array.from({ length: Math.min(40, 520 - i) }, (_, j) =>
            fetch(`${server.url}/hub/space/${space.spaceId}/messages`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'x-private-key': space.key },
              body: JSON.stringify({ content: `m${i + j}` }),
            }).then((r) => expect(r.status).toBe(200)),
          ),
        );
      }
      const all = (await room.run(['messages', '--limit', '0', '--json'])).json();
      expect(all).toHaveLength(520);
      expect(new Set(all.map((m: any) => m.id)).size).toBe(520);
      const seqs = all.map((m: any) => m.seq);
      expect(seqs).toEqual([...seqs].sort((a: number, b: number) => a - b));
      expect((await room.run(['messages', '--json'])).json()).toHaveLength(100);
    } finally {
      room.remove();
    }
  });
});

it('keeps its space id in the default-space record after sends', () => {
  expect(guest.credentials().hosts[server.url].defaultSpace).toBe(spaceId);
});
