import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Answer, FetchHeaders, httpFetch } from '../src/lib/http-fetch';

/** What a test server saw of a request. */
interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/**
 * A server on a free port whose answers the test writes; it records every request it read, and is
 * closed after the file.
 */
async function started(
  handle: (request: IncomingMessage, response: ServerResponse, body: string) => void,
): Promise<{ url: string; seen: Seen[]; server: Server }> {
  const seen: Seen[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      seen.push({ method: request.method!, url: request.url!, headers: request.headers, body });
      handle(request, response, body);
    });
  });
  return { url: await listening(server), seen, server };
}

const servers: (Server | TcpServer)[] = [];
/** Listens on a free port of loopback, closed after the file; its URL. */
async function listening(server: Server | TcpServer): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
afterAll(() => {
  for (const server of servers) if ('closeAllConnections' in server) server.closeAllConnections();
  for (const server of servers) server.close();
});

/** The TypeError fetch rejects with, and its cause. */
async function failure(
  promise: Promise<unknown>,
): Promise<{ error: TypeError; cause: Error & { code?: string } }> {
  const error = await promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TypeError);
  return { error: error as TypeError, cause: (error as TypeError).cause as Error & { code?: string } };
}

describe('httpFetch, the fetch of convene’s requests on Node’s HTTP client', () => {
  let echo: Awaited<ReturnType<typeof started>>;
  beforeAll(async () => {
    echo = await started((request, response, body) => {
      response.setHeader('x-multi', ['one', 'two']);
      response.setHeader('content-type', 'application/json');
      response.statusMessage = 'Fine';
      response.end(JSON.stringify({ method: request.method, body }));
    });
  });

  it('sends the method, headers and string body asked for, and answers a Response with status, headers and body', async () => {
    const response = await httpFetch(`${echo.url}/messages?limit=2`, {
      method: 'post',
      headers: new Headers({
        'Content-Type': 'application/json',
        Authorization: 'Bearer k',
        'API-Version': '1',
      }),
      body: JSON.stringify({ content: 'héllo ✓' }),
    });
    // An Answer, not undici's Response: a command never loads Node's fetch (httpFetch).
    expect(response).toBeInstanceOf(Answer);
    expect([response.status, response.statusText, response.ok]).toEqual([200, 'Fine', true]);
    expect([response.url, response.redirected, response.bodyUsed]).toEqual([
      `${echo.url}/messages?limit=2`,
      false,
      false,
    ]);
    expect(response.headers.get('x-multi')).toBe('one, two');
    expect(await response.json()).toEqual({ method: 'POST', body: '{"content":"héllo ✓"}' });
    // Read once, as a Response's body.
    expect(response.bodyUsed).toBe(true);
    await expect(response.text()).rejects.toThrow(TypeError);
    const request = echo.seen.at(-1)!;
    expect(request.url).toBe('/messages?limit=2');
    expect(request.headers).toMatchObject({
      'content-type': 'application/json',
      authorization: 'Bearer k',
      'api-version': '1',
      // In bytes, not characters: é and ✓ take 2 and 3.
      'content-length': String(Buffer.byteLength('{"content":"héllo ✓"}')),
    });
  });

  it('takes headers as a plain object or pairs, and types a string body without a type as fetch does', async () => {
    await (
      await httpFetch(new URL(`${echo.url}/a`), { method: 'PUT', headers: { 'X-A': '1' }, body: 'text' })
    ).text();
    expect(echo.seen.at(-1)!.headers).toMatchObject({
      'x-a': '1',
      'content-type': 'text/plain;charset=UTF-8',
    });
    await (await httpFetch(`${echo.url}/b`, { headers: [['X-B', '2']] })).text();
    expect(echo.seen.at(-1)).toMatchObject({ method: 'GET', body: '', headers: { 'x-b': '2' } });
    expect(echo.seen.at(-1)!.headers['content-type']).toBeUndefined();
  });

  it('hands a body of another kind to the global fetch', async () => {
    const bytes = new TextEncoder().encode('bytes');
    await (await httpFetch(`${echo.url}/bytes`, { method: 'POST', body: bytes })).text();
    expect(echo.seen.at(-1)).toMatchObject({ method: 'POST', body: 'bytes' });
  });

  it('answers 204, 304 and a HEAD without a body', async () => {
    const { url } = await started((request, response) => {
      response.statusCode = Number(request.url!.slice(1)) || 200;
      response.end();
    });
    for (const status of [204, 304]) {
      const response = await httpFetch(`${url}/${status}`);
      expect([response.status, response.body]).toEqual([status, null]);
    }
    const head = await httpFetch(`${url}/200`, { method: 'HEAD' });
    expect([head.status, head.body]).toEqual([200, null]);
  });

  it('streams the body as it comes: the first event is read while the server still writes, and cancelling closes the connection', async () => {
    let closed!: () => void;
    const gone = new Promise<void>((resolve) => (closed = resolve));
    const { url } = await started((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: first\n\n');
      response.on('close', closed);
    });
    const response = await httpFetch(url);
    const reader = response.body!.getReader();
    const { value } = await reader.read();
    expect(new TextDecoder().decode(value)).toBe('data: first\n\n');
    await reader.cancel();
    await gone;
  });

  it('follows redirects as fetch does: a 303 turns a POST into a GET without its body, a 307 keeps both', async () => {
    const { url, seen } = await started((request, response) => {
      if (request.url === '/see-other') response.writeHead(303, { location: '/landed' }).end();
      else if (request.url === '/temporary') response.writeHead(307, { location: `/landed?kept` }).end();
      else response.end(`${request.method} ${request.url}`);
    });
    const post = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' };
    expect(await (await httpFetch(`${url}/see-other`, post)).text()).toBe('GET /landed');
    expect(seen.at(-1)!.headers['content-type']).toBeUndefined();
    expect(seen.at(-1)!.body).toBe('');
    expect(await (await httpFetch(`${url}/temporary`, post)).text()).toBe('POST /landed?kept');
    expect(seen.at(-1)).toMatchObject({ body: '{"a":1}', headers: { 'content-type': 'application/json' } });
  });

  it('keeps credentials on a redirect within the origin, drops them on one to another origin', async () => {
    const other = await started((_request, response) => response.end('elsewhere'));
    const { url, seen } = await started((request, response) => {
      if (request.url === '/away') response.writeHead(302, { location: `${other.url}/x` }).end();
      else if (request.url === '/here') response.writeHead(301, { location: '/x' }).end();
      else response.end('here');
    });
    const init = { headers: { authorization: 'Bearer secret', 'x-kept': 'yes' } };
    expect(await (await httpFetch(`${url}/here`, init)).text()).toBe('here');
    expect(seen.at(-1)!.headers.authorization).toBe('Bearer secret');
    expect(await (await httpFetch(`${url}/away`, init)).text()).toBe('elsewhere');
    expect(other.seen.at(-1)!.headers.authorization).toBeUndefined();
    expect(other.seen.at(-1)!.headers['x-kept']).toBe('yes');
  });

  it('gives up after 20 redirects, and on one to another scheme', async () => {
    const { url, seen } = await started((request, response) => {
      if (request.url === '/ftp') response.writeHead(302, { location: 'ftp://example.com/' }).end();
      else response.writeHead(302, { location: `/loop${seen.length}` }).end();
    });
    const loop = await failure(httpFetch(`${url}/loop`));
    expect(loop.cause.message).toBe('redirect count exceeded');
    expect(seen.filter((request) => request.url.startsWith('/loop'))).toHaveLength(21);
    expect((await failure(httpFetch(`${url}/ftp`))).cause.message).toBe('redirect to ftp:');
  });

  it('fails as fetch does where nothing listens: "fetch failed", the system’s code in its cause', async () => {
    const { url, server } = await started(() => {});
    await new Promise((resolve) => server.close(resolve));
    const { error, cause } = await failure(httpFetch(url));
    expect(error.message).toBe('fetch failed');
    expect(cause.code).toBe('ECONNREFUSED');
  });

  it('says a connection closed before the answer `other side closed`, its code ECONNRESET', async () => {
    const { url } = await started((request) => request.socket.destroy());
    const { cause } = await failure(httpFetch(url, { method: 'POST', body: 'x' }));
    expect([cause.message, cause.code]).toEqual(['other side closed', 'ECONNRESET']);
  });

  it('fails a request reset on a kept-alive connection as fetch does, and sends it once: retries are the SDK’s, which knows what may run twice', async () => {
    // Answers the first request of a connection and keeps it open, resets it at the second.
    const seen = { connections: 0, requests: 0 };
    const tcp = createTcpServer((socket) => {
      seen.connections++;
      let served = 0;
      socket.on('data', (chunk) => {
        if (!chunk.toString().includes('\r\n\r\n')) return;
        seen.requests++;
        if (served++ === 0)
          socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok');
        else socket.resetAndDestroy();
      });
    });
    const url = await listening(tcp);
    expect(await (await httpFetch(url)).text()).toBe('ok');
    await new Promise((resolve) => setImmediate(resolve));
    const { cause } = await failure(httpFetch(url));
    expect(cause.code).toBe('ECONNRESET');
    expect(seen).toEqual({ connections: 1, requests: 2 });
  });

  it('fails an answer whose status no Response can hold (beyond 599)', async () => {
    const { url } = await started((_request, response) => {
      response.statusCode = 600;
      response.end('odd');
    });
    expect((await failure(httpFetch(url))).cause.message).toBe('an answer with status 600');
  });

  it('gives the parser’s code (HPE_…) when what answers does not speak HTTP', async () => {
    const tcp = createTcpServer((socket) => socket.end('SSH-2.0-OpenSSH_9.6\r\n'));
    const { cause } = await failure(httpFetch(await listening(tcp)));
    expect(cause.code).toMatch(/^HPE_/);
  });

  it('rejects with the signal’s reason when aborted before the answer, and fails the body when aborted during it', async () => {
    const { url } = await started((request, response) => {
      if (request.url === '/slow') return; // never answers
      response.writeHead(200).write('start');
    });
    const before = new AbortController();
    const pending = httpFetch(`${url}/slow`, { signal: before.signal });
    setTimeout(() => before.abort(new Error('stopped')), 20);
    await expect(pending).rejects.toThrow('stopped');
    const already = AbortSignal.abort(new Error('already'));
    await expect(httpFetch(url, { signal: already })).rejects.toThrow('already');

    const during = new AbortController();
    const response = await httpFetch(`${url}/streaming`, { signal: during.signal });
    const reader = response.body!.getReader();
    await reader.read();
    during.abort();
    await expect(reader.read()).rejects.toBeInstanceOf(Error);
  });
});

describe('FetchHeaders and Answer, fetch’s Headers and Response without loading fetch', () => {
  it('hold headers as Headers does: any case, appended values joined, set-cookie apart, sorted, checked and trimmed', () => {
    const pairs: [string, string][] = [
      ['X-B', ' 2 '],
      ['x-a', '1'],
      ['X-A', '3'],
      ['Set-Cookie', 'a=1'],
      ['set-cookie', 'b=2'],
    ];
    const ours = new FetchHeaders(pairs);
    const theirs = new Headers(pairs);
    expect([...ours]).toEqual([...theirs]);
    expect([ours.get('X-a'), ours.get('x-b'), ours.get('none')]).toEqual(['1, 3', '2', null]);
    expect(ours.getSetCookie()).toEqual(theirs.getSetCookie());
    ours.set('x-a', 'one');
    ours.delete('X-B');
    expect([...ours.keys()]).toEqual(['set-cookie', 'set-cookie', 'x-a']);
    expect(Object.fromEntries(new FetchHeaders({ Accept: 'text/plain' }))).toEqual({ accept: 'text/plain' });
    expect([...new FetchHeaders(theirs)]).toEqual([...theirs]);
    // What Headers refuses, refused: a name that is no token, a line break or a character beyond Latin-1.
    for (const [name, value] of [
      ['bad name', 'x'],
      ['x-a', 'a\nb'],
      ['x-a', '🚀'],
    ]) {
      expect(() => new Headers([[name!, value!]])).toThrow(TypeError);
      expect(() => new FetchHeaders([[name!, value!]])).toThrow(TypeError);
    }
  });

  it('answer their body once, as text, JSON, bytes or a stream, and clone it unread', async () => {
    const answer = Answer.of('{"a":"é"}', {
      status: 201,
      headers: new FetchHeaders({ 'content-type': 'application/json' }),
    });
    const copy = answer.clone();
    expect([answer.ok, answer.status, answer.type]).toEqual([true, 201, 'basic']);
    expect(await answer.json()).toEqual({ a: 'é' });
    expect(new TextDecoder().decode(await copy.bytes())).toBe('{"a":"é"}');
    expect(() => answer.clone()).toThrow(TypeError);
    expect((await Answer.of('x', { status: 200 }).blob()).size).toBe(1);
    expect(new Answer(null, { status: 404 }).ok).toBe(false);
    expect(await new Answer(null, { status: 204 }).text()).toBe('');
  });
});
