import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { useServer } from './helpers';

/** The HTTP surface browsers and odd clients meet: /mcp's Origin and Host checks. */
const { srv } = useServer();

const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });

/** A raw POST to /mcp with exactly these headers (Host and Origin included, or left out). */
function postMcp(headers: Record<string, string>): Promise<{ status: number; type: string; body: string }> {
  const url = new URL(`${srv.url}/mcp`);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: '/mcp',
        method: 'POST',
        setHost: false,
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'Content-Length': Buffer.byteLength(ping),
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
    req.end(ping);
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

  it('answers a missing or unusable Host with a JSON 400, never an empty body', async () => {
    for (const host of ['', 'a b', '[::1', 'evil:99999']) {
      const res = await postMcp({ Host: host });
      expect(res.status, `Host: ${host}`).toBe(400);
      expect(res.type).toMatch(/application\/json/);
      expect(JSON.parse(res.body).error).toMatch(/Host/);
    }
  });
});
