import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { refusal } from '../src/mcp/http';
import { expectOk, useServer, withServer } from './helpers';

/** The HTTP surface browsers and odd clients meet: the Origin checks of /mcp and /a2a, /mcp's Host check. */
const { srv } = useServer();

const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });

/** A raw POST to /mcp (or `path`) with exactly these headers (Host and Origin included, or left out). */
function postMcp(
  headers: Record<string, string>,
  body: string = ping,
  path = '/mcp',
): Promise<{ status: number; type: string; body: string }> {
  const url = new URL(`${srv.url}${path}`);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: 'POST',
        setHost: false,
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'Content-Length': Buffer.byteLength(body),
          ...headers,
        },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'] ?? '', body }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('/mcp', () => {
  it('answers a request from its own origin, and from clients that send none', async () => {
    const host = new URL(srv.url).host;
    for (const headers of [{ Host: host }, { Host: host, Origin: new URL(srv.url).origin }]) {
      const res = await postMcp(headers);
      expect(res.status, res.body).toBe(200);
      expect(JSON.parse(res.body)).toMatchObject({ jsonrpc: '2.0', id: 1, result: {} });
    }
  });

  it('takes the loopback names of a loopback PUBLIC_URL as its own origin (same scheme and port)', async () => {
    const { host, port } = new URL(srv.url);
    for (const origin of [`http://localhost:${port}`, `http://[::1]:${port}`, `http://127.0.0.1:${port}`]) {
      const res = await postMcp({ Host: host, Origin: origin });
      expect(res.status, `${origin}: ${res.body}`).toBe(200);
    }
    for (const origin of [
      `http://localhost:${Number(port) + 1}`,
      `https://localhost:${port}`,
      'http://localhost',
    ]) {
      const res = await postMcp({ Host: host, Origin: origin });
      expect(res.status, origin).toBe(403);
    }
  });

  it('refuses a page of another origin (DNS rebinding) with a JSON 403', async () => {
    const host = new URL(srv.url).host;
    for (const origin of ['http://evil.example', `http://evil.example:${new URL(srv.url).port}`, 'null']) {
      // The rebinding page reaches this server under its own name: its Host is that name too.
      for (const headers of [
        { Host: host, Origin: origin },
        { Host: 'evil.example', Origin: origin },
      ]) {
        const res = await postMcp(headers);
        expect(res.status).toBe(403);
        expect(res.type).toMatch(/application\/json/);
        expect(JSON.parse(res.body).error).toMatch(/origin/);
      }
    }
  });

  it('refuses a malformed Origin, never failing on it, whatever its own origin', () => {
    const headers = (origin: string) => ({ origin, host: 'localhost:56128' });
    const own = [new URL(srv.url).origin, 'http://localhost:56128', new URL('localhost:56128').origin];
    for (const allowedOrigin of own)
      for (const origin of ['null', 'http://[::1', '%%%', '', 'localhost:56128', 'http://evil.example']) {
        expect(() => refusal(headers(origin), allowedOrigin)).not.toThrow();
        expect({ origin, allowedOrigin, refused: refusal(headers(origin), allowedOrigin)?.status }).toEqual({
          origin,
          allowedOrigin,
          refused: 403,
        });
      }
  });

  it('answers a missing or unusable Host with a JSON 400, never an empty body', async () => {
    for (const host of ['', 'a b', '[::1', 'evil:99999']) {
      const res = await postMcp({ Host: host });
      expect(res.status, `Host: ${host}`).toBe(400);
      expect(res.type).toMatch(/application\/json/);
      expect(JSON.parse(res.body).error).toMatch(/Host/);
    }
  });

  /** A refusal every client can read: JSON `{error: string}` (spec, Errors), never a JSON-RPC envelope. */
  const expectJsonError = (
    res: { status: number; type: string; body: string },
    status: number,
    what: string,
  ) => {
    expect(res.status, `${what}: ${res.body}`).toBe(status);
    expect(res.type).toMatch(/application\/json/);
    const body = JSON.parse(res.body);
    expect(typeof body.error, `${what}: ${res.body}`).toBe('string');
    expect(body.jsonrpc).toBeUndefined();
  };

  it('answers a body that is no JSON-RPC 2.0 message with a JSON 400 {error} naming what is wrong', async () => {
    const host = new URL(srv.url).host;
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    };
    const cases: [string, unknown, RegExp][] = [
      ['version 1.0', { jsonrpc: '1.0', id: 1, method: 'ping' }, /JSON-RPC 2\.0/],
      ['no version', { id: 1, method: 'ping' }, /JSON-RPC 2\.0/],
      ['no method', { jsonrpc: '2.0', id: 1 }, /JSON-RPC 2\.0/],
      ['method not a string', { jsonrpc: '2.0', id: 1, method: 7 }, /JSON-RPC 2\.0/],
      ['params not an object', { jsonrpc: '2.0', id: 1, method: 'ping', params: 'x' }, /JSON-RPC 2\.0/],
      ['batch of numbers', [1, 2], /call 1 .*JSON-RPC 2\.0/],
      ['one bad call in a batch', [JSON.parse(ping), { jsonrpc: '1.0', id: 2, method: 'ping' }], /call 2/],
      [
        'initialize beside another call',
        [initialize, { jsonrpc: '2.0', id: 2, method: 'ping' }],
        /initialize/,
      ],
      [
        'two requests of one id (the first one’s answer was lost)',
        [
          { jsonrpc: '2.0', id: 1, method: 'ping' },
          { jsonrpc: '2.0', method: 'notifications/initialized' },
          { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        ],
        /^call 3 of the batch repeats the id 1 of an earlier call/,
      ],
      [
        'a batch of 101',
        Array.from({ length: 101 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' })),
        /100/,
      ],
    ];
    for (const [what, body, message] of cases) {
      const res = await postMcp({ Host: host }, JSON.stringify(body));
      expectJsonError(res, 400, what);
      expect(JSON.parse(res.body).error, what).toMatch(message);
    }
  });

  it('answers a wrong content type 400, an Accept without JSON and event streams 406, an unknown MCP-Protocol-Version 400, all as JSON {error}', async () => {
    const host = new URL(srv.url).host;
    expectJsonError(await postMcp({ Host: host, 'Content-Type': 'text/plain' }), 400, 'text/plain');
    expectJsonError(await postMcp({ Host: host, Accept: 'text/html' }), 406, 'Accept: text/html');
    expectJsonError(await postMcp({ Host: host, Accept: 'application/json' }), 406, 'Accept: JSON only');
    const old = await postMcp({ Host: host, 'MCP-Protocol-Version': '1999-01-01' });
    expectJsonError(old, 400, 'MCP-Protocol-Version');
    expect(JSON.parse(old.body).error).toMatch(/2025-06-18/);
    // The supported versions still pass.
    expect((await postMcp({ Host: host, 'MCP-Protocol-Version': '2025-06-18' })).status).toBe(200);
  });
});

describe('/a2a', () => {
  it('refuses a page of another origin with a JSON 403, as /mcp does, and answers its own', async () => {
    const host = new URL(srv.url).host;
    const send = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 'x' } });
    for (const origin of ['http://evil.example', 'null']) {
      const res = await postMcp({ Host: host, Origin: origin }, send, '/a2a');
      expect(res.status, origin).toBe(403);
      expect(res.type).toMatch(/application\/json/);
      expect(JSON.parse(res.body).error).toMatch(/origin/);
    }
    // Its own origin, or none, reaches the endpoint: without a key, its 401.
    for (const headers of [{ Host: host }, { Host: host, Origin: new URL(srv.url).origin }])
      expect((await postMcp(headers, send, '/a2a')).status).toBe(401);
  });
});

/**
 * A raw connection to the server at `url`: what it has written back so far, whether and when (ms
 * since the epoch) it closed. The rest of a refused request may be reset rather than read.
 */
function rawConnection(url: string) {
  const { port, hostname } = new URL(url);
  const socket = connect(Number(port), hostname);
  let answer = '';
  let closedAt: number | undefined;
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    answer += chunk;
  });
  socket.on('error', () => {});
  const closed = new Promise<number>((resolve) =>
    socket.on('close', () => {
      closedAt = Date.now();
      resolve(closedAt);
    }),
  );
  return { socket, answer: () => answer, closed, isClosed: () => closedAt !== undefined };
}

describe('slow clients', () => {
  it('cuts off a request whose headers trickle in (slowloris) at the headers deadline, with 408, and serves the others', async () => {
    await withServer({ config: { headersTimeoutMs: 1_000 } }, async ({ srv, h }) => {
      const { socket, answer, closed } = rawConnection(srv.listenUrl);
      const opened = Date.now();
      socket.write('GET /api/health HTTP/1.1\r\nHost: x\r\n');
      // A header line every 200 ms, never the blank line that ends them.
      const trickle = setInterval(() => socket.writable && socket.write('X-Slow: 1\r\n'), 200);
      try {
        expectOk(await h.get('/api/health'));
        const at = await closed;
        expect(answer()).toMatch(/^HTTP\/1\.1 408 /);
        // The deadline and at most one check interval after it (half the deadline), with slack.
        expect(at - opened).toBeLessThan(5_000);
      } finally {
        clearInterval(trickle);
        socket.destroy();
      }
    });
  }, 20_000);

  it('answers a request whose body trickles in 408 at the request deadline (the client is late, not the service), then closes its connection', async () => {
    await withServer({ config: { requestTimeoutMs: 1_000, headersTimeoutMs: 500 } }, async ({ srv, h }) => {
      const { socket, answer: answered, closed } = rawConnection(srv.listenUrl);
      const opened = Date.now();
      const space = await h.createSpace();
      socket.write(
        `POST /hub/space/${space.spaceId}/messages HTTP/1.1\r\nHost: x\r\nX-Private-Key: ${space.ownerKey}\r\n` +
          'Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"content": "late"',
      );
      // A byte of the body every 200 ms: it would take 20,000 s to arrive.
      const trickle = setInterval(() => socket.writable && socket.write(' '), 200);
      try {
        expectOk(await h.get('/api/health'));
        const at = await closed;
        const answer = answered();
        expect(answer).toMatch(/^HTTP\/1\.1 408 /);
        // One answer: closed once it is out, not answered again by Node's own deadline.
        expect(answer.match(/HTTP\/1\.1 \d{3} /g)).toEqual(['HTTP/1.1 408 ']);
        expect(answer).toMatch(/\r\nconnection: close\r\n/i);
        // As headers that trickle are answered; no Retry-After, which would invite it back.
        expect(answer).not.toMatch(/\r\nretry-after:/i);
        expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({
          error: 'the request did not arrive in time',
          code: 'invalid_request',
        });
        // Read no longer than the deadline and one check interval after it, with slack (Node's
        // own deadline would have read it for 300 s).
        expect(at - opened).toBeLessThan(5_000);
        // Nothing of it was sent.
        const list = await h.get(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey });
        expectOk(list);
        expect(list.body.messages.filter((m: { type: string }) => m.type !== 'system')).toEqual([]);
      } finally {
        clearInterval(trickle);
        socket.destroy();
      }
    });
  }, 20_000);
});

describe('kept-alive connections', () => {
  it("keeps an idle connection 72 s, as Fastify does (Node's 5 s closed it before proxies' pools let go of it)", async () => {
    const { socket, answer, isClosed } = rawConnection(srv.url);
    const answers = () => answer().match(/HTTP\/1\.1 200 /g)?.length ?? 0;
    try {
      socket.write('GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n');
      await expect.poll(answers).toBe(1);
      expect(answer()).toMatch(/\r\nkeep-alive: timeout=72\r\n/i);
      // Longer than Node's own keep-alive, idle.
      await new Promise((resolve) => setTimeout(resolve, 5_500));
      expect(isClosed()).toBe(false);
      socket.write('GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n');
      await expect.poll(answers).toBe(2);
    } finally {
      socket.destroy();
    }
  }, 15_000);
});

describe("requests Node's HTTP parser refuses", () => {
  /** Sends `request` on a raw socket and gives all the server wrote back before it closed. */
  async function raw(url: string, request: string): Promise<string> {
    const { socket, answer, closed } = rawConnection(url);
    socket.write(request);
    await closed;
    return answer();
  }

  it('answers headers over 16 KiB (431), a malformed header and a CONNECT (400) as JSON {error, code} with a Request-Id, logged under it', async () => {
    const lines: string[] = [];
    await withServer(
      { config: { logLevel: 'info' }, logStream: { write: (line) => void lines.push(line) } },
      async ({ srv: node, h }) => {
        const parser = 'request refused by the HTTP parser';
        const cases = [
          [
            `GET /api/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
            431,
            /too large/,
            parser,
          ],
          [
            'GET /api/health HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n',
            400,
            /^malformed HTTP request/,
            parser,
          ],
          // A proxy's tunnel: Node never hands it to the handler, and closed it unanswered.
          [
            'CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n',
            400,
            /^CONNECT is not served/,
            'CONNECT refused',
          ],
        ] as const;
        for (const [request, status, message, logged] of cases) {
          const answer = await raw(node.listenUrl, request);
          const [head = '', body = ''] = answer.split('\r\n\r\n');
          expect(head).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
          expect(head).toMatch(/\r\ncontent-type: application\/json; charset=utf-8\r\n/i);
          expect(head).toMatch(/\r\napi-version: /i);
          const id = /\r\nrequest-id: ([0-9a-f-]{36})(\r\n|$)/i.exec(head)?.[1];
          expect(id, head).toBeDefined();
          const parsed = JSON.parse(body);
          expect(parsed).toEqual({ error: expect.stringMatching(message), code: 'invalid_request' });
          await expect
            .poll(() =>
              lines
                .flatMap((chunk) => chunk.split('\n').filter(Boolean))
                .map((line) => JSON.parse(line))
                .find((line) => line.reqId === id),
            )
            .toMatchObject({ msg: logged, res: { statusCode: status } });
        }
        // The node serves on.
        expectOk(await h.get('/api/health'));
      },
    );
  });

  it('answers an HTTP/1.1 request without Host 400 as JSON {error, code}, where Node answered an empty 400; HTTP/1.0 needs none', async () => {
    await withServer({}, async ({ srv: node }) => {
      const answer = await raw(node.listenUrl, 'GET /api/health HTTP/1.1\r\nConnection: close\r\n\r\n');
      const [head = '', body = ''] = answer.split('\r\n\r\n');
      expect(head).toMatch(/^HTTP\/1\.1 400 /);
      expect(head).toMatch(/\r\ncontent-type: application\/json; charset=utf-8\r\n/i);
      expect(head).toMatch(/\r\nrequest-id: [0-9a-f-]{36}(\r\n|$)/i);
      expect(JSON.parse(body)).toEqual({
        error: 'the Host header is required (HTTP/1.1)',
        code: 'invalid_request',
      });
      const old = await raw(node.listenUrl, 'GET /api/health HTTP/1.0\r\n\r\n');
      expect(old).toMatch(/^HTTP\/1\.1 200 /);
      expect(old.split('\r\n\r\n')[1]).toBe('{"status":"ok"}');
    });
  });
});
