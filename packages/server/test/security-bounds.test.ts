import { limits } from '@convene/contract';
import { describe, expect, it } from 'vitest';
import { expectOk, useServer } from './helpers';
import { SseStream } from './helpers/sse';

/** Expensive answers are bounded: no request makes the server build megabytes it need not. */
const { srv, h } = useServer();

/** A 1 MiB image message (the largest content a message may have). */
const bigImage = (n: number) => {
  const prefix = 'data:image/png;base64,';
  const body = `${String(n).padStart(4, '0')}${'A'.repeat(limits.imageDataUriMax - prefix.length - 4)}`;
  return `${prefix}${body}`;
};

describe('a listMessages page', () => {
  it('stops at 4 MiB of content, and the cursor pages through the rest', async () => {
    const space = await h.createSpace();
    for (let i = 0; i < 9; i++) {
      expectOk(
        await h.post(`/hub/space/${space.spaceId}/messages`, {
          key: space.ownerKey,
          body: { type: 'image', content: bigImage(i) },
        }),
      );
    }
    expectOk(
      await h.post(`/hub/space/${space.spaceId}/messages`, {
        key: space.ownerKey,
        body: { content: 'last' },
      }),
    );
    const pages: number[] = [];
    const seen: number[] = [];
    let cursor: string | undefined;
    for (;;) {
      const query = cursor === undefined ? '' : `?timestamp=${encodeURIComponent(cursor)}`;
      const page = await h.get(`/hub/space/${space.spaceId}/messages${query}`, { key: space.ownerKey });
      expectOk(page);
      if (page.body.messages.length === 0) break;
      pages.push(page.body.messages.length);
      const bytes = page.body.messages.reduce((n: number, m: { content: string }) => n + m.content.length, 0);
      // Under 4 MiB before its last message: a page never carries more than 4 MiB + one message.
      expect(bytes - page.body.messages.at(-1).content.length).toBeLessThan(limits.messagesPageBytes);
      seen.push(...page.body.messages.map((m: { seq: number }) => m.seq));
      expect(page.body.cursor).toBe(page.body.messages.at(-1).timestamp);
      cursor = page.body.cursor;
    }
    expect(pages).toEqual([4, 4, 2]);
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  }, 60_000);
});

describe('a context bundle', () => {
  it('carries each role cut to 200 characters, SpaceView’s too; a participant-status event has it whole', async () => {
    const space = await h.createSpace({ ownerRole: 'o'.repeat(limits.textMax) });
    const role = `${'é'.repeat(150)}${'r'.repeat(limits.textMax - 150)}`;
    const p = await h.joinActive(space, { role });
    const stream = await SseStream.connect(srv.url, space.spaceId, { key: space.ownerKey });
    const context = (await stream.until((e) => e.event === 'context')).at(-1)!;
    const sent = await h.post(`/hub/space/${space.spaceId}/messages`, {
      key: p.key,
      body: { content: 'hi' },
    });
    expectOk(sent);
    const listed = await h.get(`/hub/space/${space.spaceId}/messages`, { key: p.key });
    // A change of the space sends a fresh context on the stream.
    expectOk(
      await h.post(`/hub/space/${space.spaceId}/artifact`, {
        key: p.key,
        body: { name: 'notes', type: 'markdown' },
      }),
    );
    const later = (await stream.until((e) => e.event === 'context')).at(-1)!;
    stream.close();
    const cut = role.slice(0, limits.contextRoleMax);
    for (const bundle of [sent.body, listed.body, context.json, later.json]) {
      const roles = bundle.participants.map((x: { role: string }) => x.role);
      expect(roles).toEqual(['o'.repeat(limits.contextRoleMax), cut]);
    }
    const view = await h.get(`/hub/space/${space.spaceId}`, { key: p.key });
    expectOk(view);
    expect(view.body.participants.map((x: { role: string }) => x.role)).toEqual([
      'o'.repeat(limits.contextRoleMax),
      cut,
    ]);
    // The join's own event, replayed from the start, says who joined as they described themselves.
    const replay = await SseStream.connect(srv.url, space.spaceId, { key: space.ownerKey, lastEventId: '0' });
    const joined = (await replay.until((e) => e.event === 'participant-status')).at(-1)!;
    replay.close();
    expect(joined.json.role).toBe(role);
  });
});
