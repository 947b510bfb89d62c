import type { IncomingMessage, ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { RUNNING_PER_CONNECTION, WAITING_PER_CONNECTION } from '../src/http/pipelining';
import { expectOk, useServer } from './helpers';

/**
 * Pipelined HTTP/1.1 (several requests written before their answers are read): a connection has
 * at most 16 requests running, those beyond wait with its reading paused, and one that has more
 * than 80 unanswered is closed (trial 51: 40 connections × 3,000 health probes, never read, took
 * a node to 2.5 GB and made another user's send time out).
 */
let release = () => {};
/** A request that answers once the test lets it (`release`). */
const held = () =>
  new Promise<void>((resolve) => {
    release = resolve;
  });
let holding: Promise<void> = Promise.resolve();
const { srv, h } = useServer({
  routes: (app) =>
    app.get('/test/held', async () => {
      await holding;
      return { held: true };
    }),
});

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A raw connection that reads the answers to its pipelined requests as they come, in order. */
function pipe(url: string): { socket: Socket; answers: Answer[]; next(count: number): Promise<Answer[]> } {
  const { port, hostname } = new URL(url);
  const socket = connect(Number(port), hostname);
  socket.on('error', () => {});
  const answers: Answer[] = [];
  let buffer = Buffer.alloc(0);
  let waiter: (() => void) | undefined;
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    for (;;) {
      const end = buffer.indexOf('\r\n\r\n');
      if (end < 0) break;
      const [statusLine = '', ...lines] = buffer.subarray(0, end).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      // Every answer here has a Content-Length (JSON).
      const length = Number(headers['content-length']);
      if (buffer.length < end + 4 + length) break;
      answers.push({
        status: Number(statusLine.split(' ')[1]),
        headers,
        body: buffer.subarray(end + 4, end + 4 + length).toString('utf8'),
      });
      buffer = buffer.subarray(end + 4 + length);
    }
    waiter?.();
  });
  return {
    socket,
    answers,
    /** Resolves once `count` answers in all have come. */
    next: (count) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (answers.length >= count) resolve(answers.slice(0, count));
        };
        const closed = () =>
          answers.length >= count ? resolve(answers) : reject(new Error(`closed after ${answers.length}`));
        waiter = check;
        if (socket.destroyed) closed();
        socket.once('close', closed);
        check();
      }),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once `check` holds, asked every 50 ms for up to 10 s. */
async function until(check: () => Promise<boolean>): Promise<void> {
  for (const started = Date.now(); Date.now() - started < 10_000; await sleep(50)) if (await check()) return;
  throw new Error('never came true');
}

const health = (id: string) => `GET /api/health HTTP/1.1\r\nHost: x\r\nRequest-Id: ${id}\r\n\r\n`;

function send(spaceId: string, key: string, id: string, content: string): string {
  const body = JSON.stringify({ content });
  return (
    `POST /hub/space/${spaceId}/messages HTTP/1.1\r\nHost: x\r\nX-Private-Key: ${key}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nRequest-Id: ${id}\r\n\r\n${body}`
  );
}

/** Counts the requests of each connection that reach the server's listeners, and the most at once. */
function watchRequests(): { started: Map<Socket, number>; mostAtOnce(): number; stop(): void } {
  const server = srv.server.app.server;
  const started = new Map<Socket, number>();
  const running = new Map<Socket, number>();
  let most = 0;
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    started.set(socket, (started.get(socket) ?? 0) + 1);
    const now = (running.get(socket) ?? 0) + 1;
    running.set(socket, now);
    most = Math.max(most, now);
    res.on('close', () => running.set(socket, (running.get(socket) ?? 1) - 1));
  };
  server.on('request', onRequest);
  return { started, mostAtOnce: () => most, stop: () => server.off('request', onRequest) };
}

describe('pipelined requests', () => {
  it('answers a client that keeps 10 requests in flight, and one that writes 60 at once, every answer in order and JSON', async () => {
    // As undici's `pipelining: 10` and autocannon's `-p 10` do: a new request as each answer comes.
    const deep = pipe(srv.listenUrl);
    let sent = 0;
    const total = 100;
    const write = () => deep.socket.write(health(`deep-${sent++}`));
    for (let i = 0; i < 10; i++) write();
    deep.socket.on('data', () => {
      while (sent < total && sent - deep.answers.length < 10) write();
    });
    const answers = await deep.next(total);
    expect(answers.map((a) => a.headers['request-id'])).toEqual(
      Array.from({ length: total }, (_, i) => `deep-${i}`),
    );
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(answer.body)).toMatchObject({ status: 'ok' });
    }
    deep.socket.destroy();

    // 60 sends written at once (16 run, the rest wait their turn with the reading paused), each
    // with its body: all answered, in order, and all stored (those running at once in any order:
    // pipelining orders the answers, not the work).
    const space = await h.createSpace();
    const burst = pipe(srv.listenUrl);
    const count = RUNNING_PER_CONNECTION + 44;
    burst.socket.write(
      Array.from({ length: count }, (_, i) => send(space.spaceId, space.ownerKey, `send-${i}`, `m${i}`)).join(
        '',
      ),
    );
    const sends = await burst.next(count);
    expect(sends.map((a) => `${a.status} ${a.headers['request-id']}`)).toEqual(
      Array.from({ length: count }, (_, i) => `200 send-${i}`),
    );
    burst.socket.destroy();
    const list = await h.get(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey });
    expectOk(list);
    const stored = list.body.messages
      .map((m: { content: string }) => m.content)
      .filter((c: string) => /^m\d+$/.test(c));
    expect(stored.sort()).toEqual(Array.from({ length: count }, (_, i) => `m${i}`).sort());
  }, 30_000);

  it('reads no further while requests wait, though the answers behind a slow one are ready', async () => {
    holding = held();
    const conn = pipe(srv.listenUrl);
    // A slow request, then 15 that answer at once (queued behind it, which Node takes as its cue
    // to read on) and 40 that wait: then 60 more, which must stay unread until those have started,
    // or the connection would have more than 80 unanswered and be closed.
    const first = ['GET /test/held HTTP/1.1\r\nHost: x\r\nRequest-Id: r-0\r\n\r\n'];
    for (let i = 1; i < 56; i++) first.push(health(`r-${i}`));
    conn.socket.write(first.join(''));
    await sleep(300);
    conn.socket.write(Array.from({ length: 60 }, (_, i) => health(`r-${56 + i}`)).join(''));
    await sleep(300);
    expect(conn.answers).toEqual([]);
    release();
    const answers = await conn.next(116);
    expect(answers.map((a) => `${a.status} ${a.headers['request-id']}`)).toEqual(
      Array.from({ length: 116 }, (_, i) => `200 r-${i}`),
    );
    conn.socket.destroy();
  }, 30_000);

  it('starts a waiting request whose body is still coming with the reading on', async () => {
    holding = held();
    const space = await h.createSpace();
    const conn = pipe(srv.listenUrl);
    // 16 run (the second one slow), the 17th waits with its body half-way. When the first is out
    // the 17th starts; its body must be read then, not once the slow one is answered.
    const requests = [
      health('b-0'),
      'GET /test/held HTTP/1.1\r\nHost: x\r\nRequest-Id: b-1\r\n\r\n',
      ...Array.from({ length: RUNNING_PER_CONNECTION - 2 }, (_, i) => health(`b-${i + 2}`)),
    ].join('');
    const last = send(
      space.spaceId,
      space.ownerKey,
      `b-${RUNNING_PER_CONNECTION}`,
      'the body that came late',
    );
    conn.socket.write(requests + last.slice(0, -5));
    await sleep(300);
    conn.socket.write(last.slice(-5));
    try {
      await until(async () => {
        const list = await h.get(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey });
        return list.body.messages.some((m: { content: string }) => m.content === 'the body that came late');
      });
    } finally {
      release();
    }
    const answers = await conn.next(RUNNING_PER_CONNECTION + 1);
    expect(answers.map((a) => `${a.status} ${a.headers['request-id']}`)).toEqual(
      Array.from({ length: RUNNING_PER_CONNECTION + 1 }, (_, i) => `200 b-${i}`),
    );
    conn.socket.destroy();
  }, 30_000);

  it('runs at most 16 requests of a connection that pipelines thousands it never reads, closes it, and serves another client meanwhile', async () => {
    const space = await h.createSpace();
    const watch = watchRequests();
    const { port, hostname } = new URL(srv.listenUrl);
    const flood: Socket[] = [];
    try {
      // 10 connections × 3,000 health probes (the one route no rate limit counts), never read.
      for (let c = 0; c < 10; c++) {
        const socket = connect(Number(port), hostname);
        socket.on('error', () => {});
        socket.pause();
        socket.write(health(`flood-${c}`).repeat(3_000));
        flood.push(socket);
      }
      const before = Date.now();
      const victim = await h.post(`/hub/space/${space.spaceId}/messages`, {
        key: space.ownerKey,
        body: { content: 'served meanwhile' },
      });
      expectOk(victim);
      // Generous for a loaded 2-core machine: before, 30,000 probes ran at once ahead of it.
      expect(Date.now() - before).toBeLessThan(10_000);

      // Every flood connection is closed by the server (seen once it is read), having run at most
      // 16 at once and no more than the 80 it may have unanswered.
      const closed = flood.map((socket) => new Promise((resolve) => socket.once('close', resolve)));
      for (const socket of flood) socket.resume();
      const timeout = new Promise((_, reject) =>
        setTimeout(() => reject(new Error('the flood connections are still open')), 20_000).unref(),
      );
      await Promise.race([Promise.all(closed), timeout]);
      expect(watch.mostAtOnce()).toBeLessThanOrEqual(RUNNING_PER_CONNECTION);
      const unanswered = RUNNING_PER_CONNECTION + WAITING_PER_CONNECTION;
      for (const started of watch.started.values()) expect(started).toBeLessThanOrEqual(unanswered);
      // Of the 30,000, the 80 each connection may have started at most (the victim's one aside).
      const total = [...watch.started.values()].reduce((a, b) => a + b, 0);
      expect(total).toBeLessThanOrEqual(10 * unanswered + 1);
    } finally {
      watch.stop();
      for (const socket of flood) socket.destroy();
    }
    // The node serves as before.
    expectOk(await h.get('/api/health'));
  }, 60_000);
});
