// The transport's pure parts: backoff, Retry-After, the error of an answer, invitation links, and
// the APIPromise contract. Everything that talks to a server is tested against a real one.
import { describe, expect, it } from 'vitest';
import {
  APIPromise,
  AuthenticationError,
  BadRequestError,
  Convene,
  ConveneError,
  InternalServerError,
  LockedError,
  NotFoundError,
  parseInvitationLink,
  RateLimitError,
  ServiceUnavailableError,
  type WithResponse,
} from '../../src';
import { errorFromResponse } from '../../src/errors';
import { backoffMs, reconnectDelayMs } from '../../src/internal';
import { refusedWhileClosing, retryDelayMs } from '../../src/transport';

describe('backoff', () => {
  it('doubles from 0.5 s up to 8 s (2.5 s for a long-lived loop), less up to a quarter of jitter, in whole ms', () => {
    for (const [backoff, cap] of [
      [backoffMs, 8000],
      [reconnectDelayMs, 2500],
    ] as const) {
      for (let attempt = 0; attempt < 8; attempt++) {
        const base = Math.min(500 * 2 ** attempt, cap);
        for (let i = 0; i < 50; i++) {
          const delay = backoff(attempt);
          expect(Number.isInteger(delay)).toBe(true);
          expect(delay).toBeGreaterThanOrEqual(base * 0.75);
          expect(delay).toBeLessThanOrEqual(base);
        }
      }
    }
  });

  /** The pause a call of the default client makes before its retry number `attempt` + 1. */
  const delay = (headers: Headers, attempt: number) => retryDelayMs(headers, attempt, 60_000);

  it('follows Retry-After in seconds or as a date, and refuses to wait beyond a minute', () => {
    const afterTwo = Array.from({ length: 40 }, () => delay(new Headers({ 'retry-after': '2' }), 0)!);
    for (const delay of afterTwo) {
      expect(delay).toBeGreaterThanOrEqual(2000);
      expect(delay).toBeLessThanOrEqual(2500);
    }
    // Spread: the clients of one restarted server, all told 2 s, do not come back together.
    expect(new Set(afterTwo.map(Math.round)).size).toBeGreaterThan(10);
    const afterFifty = delay(new Headers({ 'retry-after': '50' }), 0)!;
    expect(afterFifty).toBeGreaterThanOrEqual(50_000);
    expect(afterFifty).toBeLessThanOrEqual(51_000);
    expect(delay(new Headers({ 'retry-after': '0' }), 3)).toBe(0);
    const inFive = new Date(Date.now() + 5000).toUTCString();
    const fromDate = delay(new Headers({ 'retry-after': inFive }), 0)!;
    expect(fromDate).toBeGreaterThan(3000);
    expect(fromDate).toBeLessThanOrEqual(6250);
    expect(delay(new Headers({ 'retry-after': '120' }), 0)).toBeUndefined();
    expect(delay(new Headers(), 1)).toBeGreaterThanOrEqual(750);
  });

  it('throws at once a Retry-After beyond the longest the client or the call waits (maxRetryAfterMs)', () => {
    const retryAfter = (seconds: string) => new Headers({ 'retry-after': seconds });
    expect(retryDelayMs(retryAfter('5'), 0, 5000)).toBeGreaterThanOrEqual(5000);
    expect(retryDelayMs(retryAfter('6'), 0, 5000)).toBeUndefined();
    expect(retryDelayMs(retryAfter('90'), 0, 120_000)).toBeGreaterThanOrEqual(90_000);
    // Without a Retry-After, the backoff, whatever the cap.
    expect(retryDelayMs(new Headers(), 0, 0)).toBeGreaterThanOrEqual(375);
  });
});

describe('errorFromResponse', () => {
  it('makes the class of the status, with the details of the body', () => {
    const locked = errorFromResponse(
      423,
      new Headers({ 'request-id': 'req-1' }),
      JSON.stringify({ error: 'artifact is locked', lockedBy: 'p-1', lockExpiresAt: '2030-01-01T00:00:00Z' }),
    );
    expect(locked).toBeInstanceOf(LockedError);
    expect(locked).toMatchObject({
      status: 423,
      message: '423 artifact is locked',
      lockedBy: 'p-1',
      lockExpiresAt: '2030-01-01T00:00:00Z',
      requestId: 'req-1',
    });
    const limited = errorFromResponse(429, new Headers({ 'retry-after': '7' }), '{"error":"slow down"}');
    expect(limited).toBeInstanceOf(RateLimitError);
    expect((limited as RateLimitError).retryAfter).toBe(7);
  });

  it('says in a line of words what answered when it is not Convene: a page’s text without tags or line breaks, cut at 200 characters', () => {
    const page = errorFromResponse(
      502,
      new Headers({ 'content-type': 'text/html' }),
      '<html>\n<head><title>502 Bad Gateway</title></head>\n<body>\n<center><h1>502 Bad Gateway</h1></center>\n<hr><center>nginx</center>\n</body>\n</html>\n',
    );
    expect(page.message).toBe('502 502 Bad Gateway 502 Bad Gateway nginx');
    expect(page.code).toBeUndefined();
    const long = errorFromResponse(
      503,
      new Headers(),
      `<p>Down\n  for   maintenance</p>${'<p>x</p>'.repeat(200)}`,
    );
    expect(long.message).toMatch(/^503 Down for maintenance x x .*…$/);
    expect(long.message).toHaveLength('503 '.length + 200);
    expect(errorFromResponse(500, new Headers(), 'upstream\ntimed out\n').message).toBe(
      '500 upstream timed out',
    );
    expect(errorFromResponse(502, new Headers(), '').message).toBe('502 no error message');
  });

  it('gives a 400 its issues, the fields the request got wrong, and none when the body has no list', () => {
    const issues = [
      { path: ['content'], message: 'Too small: expected string to have >=1 characters' },
      { path: ['mentions', 0], message: 'Invalid UUID' },
    ];
    const invalid = errorFromResponse(
      400,
      new Headers(),
      JSON.stringify({ error: 'invalid request', issues }),
    );
    expect(invalid).toBeInstanceOf(BadRequestError);
    expect((invalid as BadRequestError).issues).toEqual(issues);
    const refused = errorFromResponse(400, new Headers(), '{"error":"mentions: x is not in this space"}');
    expect((refused as BadRequestError).issues).toBeUndefined();
  });

  it('keeps the words of a body that is not JSON as the message, and has a class for every status', () => {
    const proxy = errorFromResponse(502, new Headers(), '<html>Bad Gateway</html>');
    expect(proxy).toBeInstanceOf(InternalServerError);
    expect(proxy.message).toBe('502 Bad Gateway');
    expect(proxy.body).toBeUndefined();
    expect(proxy.code).toBeUndefined();
    const teapot = errorFromResponse(418, new Headers(), '{"error":"short and stout"}');
    expect(teapot.constructor).toBe(ConveneError);
    expect(teapot.status).toBe(418);
    expect(teapot.code).toBeUndefined();
    // A code this SDK does not know is kept as it came; a code that is not a string is none.
    expect(errorFromResponse(409, new Headers(), '{"error":"e","code":"brand_new"}').code).toBe('brand_new');
    expect(errorFromResponse(409, new Headers(), '{"error":"e","code":7}').code).toBeUndefined();
  });
});

describe('when a 429 or a 503 says to try again', () => {
  /** The error a call throws once its retries are spent, the server answering `status` with `error`. */
  const thrown = (status: number, error: string, retryAfter?: string, lines: string[] = []) =>
    new Convene({
      baseUrl: 'http://convene.test',
      logLevel: 'info',
      logger: { debug() {}, info: (line) => lines.push(line), warn: (line) => lines.push(line), error() {} },
      maxRetries: retryAfter === undefined ? 0 : 1,
      fetch: async () =>
        new Response(JSON.stringify({ error }), {
          status,
          headers: {
            'content-type': 'application/json',
            ...(retryAfter ? { 'retry-after': retryAfter } : {}),
          },
        }),
    })
      .health()
      .then(
        () => expect.unreachable('the call should have failed'),
        (e: unknown) => e as ConveneError,
      );

  it('says its Retry-After in the message, as retryAfter says it, unless the server’s words say when', async () => {
    expect(await thrown(429, 'rate limit exceeded', '0')).toMatchObject({
      message: '429 rate limit exceeded (retry after 0 s)',
      retryAfter: 0,
    });
    const away = await thrown(503, 'the database is away', '0');
    expect(away).toBeInstanceOf(ServiceUnavailableError);
    expect(away.message).toBe('503 the database is away (retry after 0 s)');
    // In whole seconds, rounded up (a date: the seconds from now); no Retry-After, no note.
    expect((await thrown(429, 'slow down', '0.2')).message).toBe('429 slow down (retry after 1 s)');
    expect((await thrown(429, 'slow down')).message).toBe('429 slow down');
    // "Shortly" says not when: the note does.
    expect((await thrown(503, 'the server is shutting down; retry shortly', '0')).message).toBe(
      '503 the server is shutting down; retry shortly (retry after 0 s)',
    );
    // Words that say when already are not said twice.
    for (const words of [
      'too many password checks from this address at once: retry in a second',
      'slow down: try again in 20 s',
      'Retry after 2 seconds',
    ])
      expect((await thrown(429, words, '0')).message).toBe(`429 ${words}`);
    // Only the errors that carry retryAfter: a 500 with a Retry-After is said as it came.
    expect((await thrown(500, 'broke', '0')).message).toBe('500 broke');
  });

  it('leaves the note out of a retry’s log line, which says the wait it makes', async () => {
    const lines: string[] = [];
    const error = await thrown(429, 'rate limit exceeded', '0', lines);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error.message).toBe('429 rate limit exceeded (retry after 0 s)');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/answered 429 rate limit exceeded; retrying in \d+ ms \(retry 1 of 1\)$/);
  });
});

describe('a 503 of a server shutting down', () => {
  const answer = (status: number, body: object) =>
    errorFromResponse(status, new Headers({ 'content-type': 'application/json' }), JSON.stringify(body));

  it('is told by its code, whatever the words', () => {
    expect(refusedWhileClosing(answer(503, { error: 'closing', code: 'shutting_down' }))).toBe(true);
    const words = 'the server is shutting down; retry shortly';
    expect(refusedWhileClosing(answer(503, { error: words }))).toBe(false);
    const bare = { error: 'Service Unavailable', message: 'Service Unavailable', statusCode: 503 };
    expect(refusedWhileClosing(answer(503, bare))).toBe(false);
    // Any other 503 may have run: its database away, a request over 30 s, a code of its own.
    const away = 'the service is briefly unavailable (its database cannot be reached); retry shortly';
    expect(refusedWhileClosing(answer(503, { error: away, code: 'unavailable' }))).toBe(false);
    expect(refusedWhileClosing(answer(503, { error: words, code: 'some_later_code' }))).toBe(false);
    expect(refusedWhileClosing(answer(503, { error: 'Service Unavailable' }))).toBe(false);
    expect(refusedWhileClosing(answer(500, { error: words, code: 'shutting_down' }))).toBe(false);
  });

  it('sends again even a write never replayed (createSpace): it did not run', async () => {
    const answers = [
      () =>
        new Response(JSON.stringify({ error: 'closing', code: 'shutting_down' }), {
          status: 503,
          headers: { 'content-type': 'application/json', 'retry-after': '0' },
        }),
      () =>
        new Response(JSON.stringify({ error: 'the database is away', code: 'unavailable' }), {
          status: 503,
          headers: { 'content-type': 'application/json', 'retry-after': '0' },
        }),
    ];
    const sent: string[] = [];
    const hub = new Convene({
      baseUrl: 'http://convene.test',
      logLevel: 'off',
      fetch: async (input, init) => {
        sent.push(`${init?.method} ${new URL(String(input)).pathname}`);
        return answers[sent.length - 1]!();
      },
    });
    // The shutdown's 503 is sent again; the database's may have run: not sent again, and said.
    const error = await hub.spaces.create({ name: 'n', description: 'd' }).catch((e: unknown) => e);
    expect(sent).toEqual(['POST /hub/space', 'POST /hub/space']);
    expect(error).toMatchObject({ status: 503, code: 'unavailable' });
  });
});

describe('the call an error came from', () => {
  const spaceId = '6f1c2a7e-3b4d-4e5f-8a9b-0c1d2e3f4a5b';
  it('names its operation, method and URL (no credentials) on an answer’s error and an abort too', async () => {
    const hub = new Convene({
      baseUrl: 'http://ada:secret@convene.test/base',
      logLevel: 'off',
      fetch: async () =>
        new Response(JSON.stringify({ error: 'space not found', code: 'not_found' }), {
          status: 404,
          headers: { 'content-type': 'application/json' },
        }),
    });
    const missing = await hub
      .space(spaceId, 'k'.repeat(64))
      .get()
      .catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing).toMatchObject({
      operation: 'getSpace',
      method: 'GET',
      url: `http://convene.test/base/hub/space/${spaceId}`,
    });
    expect(JSON.parse(JSON.stringify(missing))).toMatchObject({ operation: 'getSpace', method: 'GET' });
    const aborted = await hub
      .space(spaceId, 'k'.repeat(64))
      .messages.send('x', { signal: AbortSignal.abort() })
      .catch((e: unknown) => e);
    expect(aborted).toMatchObject({ name: 'AbortError', operation: 'sendMessage', method: 'POST' });
    // An error no request made names none.
    expect(new ConveneError('bad argument').operation).toBeUndefined();
  });
});

describe('a poll of a pending join answered 404', () => {
  const pollAnswered = (body: object) => {
    const hub = new Convene({
      baseUrl: 'http://convene.test',
      logLevel: 'off',
      fetch: async () =>
        new Response(JSON.stringify(body), { status: 404, headers: { 'content-type': 'application/json' } }),
    });
    return hub
      .pendingJoin({
        spaceId: '6f1c2a7e-3b4d-4e5f-8a9b-0c1d2e3f4a5b',
        invitationKey: 'inv',
        participantId: '3f2e0000-0000-4000-8000-000000000001',
        pollToken: 'poll_x',
      })
      .check()
      .then(
        () => expect.unreachable('the poll should have been refused'),
        (e: unknown) => e as ConveneError,
      );
  };
  it('throws the server’s NotFoundError, its code and words, once the key was handed out', async () => {
    const error =
      'pending join request not found: its key was already handed out (by a poll more than 10 minutes ago)';
    const collected = await pollAnswered({ error, code: 'join_key_collected' });
    expect(collected).toBeInstanceOf(NotFoundError);
    expect(collected).toMatchObject({ status: 404, code: 'join_key_collected', message: `404 ${error}` });
  });
});

describe('parseInvitationLink', () => {
  const spaceId = '6f1c2a7e-3b4d-4e5f-8a9b-0c1d2e3f4a5b';
  it('reads an agentLink and a humanLink', () => {
    expect(parseInvitationLink(`https://c.example/hub/space/${spaceId}/agent.md?key=abc`)).toEqual({
      spaceId,
      invitationKey: 'abc',
    });
    expect(parseInvitationLink(`https://c.example/join/${spaceId}#key=k%2By`)).toEqual({
      spaceId,
      invitationKey: 'k+y',
    });
  });

  it('refuses anything else', () => {
    expect(() => parseInvitationLink('not a url')).toThrow(ConveneError);
    // A link cut short (no key, no space id) is said as one.
    for (const link of [`https://c.example/join/${spaceId}`, 'https://c.example/join/#key=abc'])
      expect(() => parseInvitationLink(link)).toThrow(
        'not an invitation link (its agentLink or humanLink; or give the space id and key)',
      );
  });
});

describe('APIPromise', () => {
  const response = new Response('{}');

  it('resolves with the data, and withResponse() with the data and the response', async () => {
    const promise = new APIPromise(Promise.resolve({ data: 42, response }));
    expect(await promise).toBe(42);
    expect(await promise.withResponse()).toEqual({ data: 42, response });
    expect(await promise.then((n) => n + 1)).toBe(43);
    expect(await promise.finally(() => {})).toBe(42);
  });

  it('leaves no unobserved rejection behind when only withResponse() is read', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const failure = new Error('no answer');
      const promise = new APIPromise<number>(Promise.reject(failure) as Promise<WithResponse<number>>);
      await expect(promise.withResponse()).rejects.toBe(failure);
      await expect(promise.catch((e: unknown) => e)).resolves.toBe(failure);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

describe('clients as JSON', () => {
  const hub = new Convene({
    baseUrl: 'http://convene.test/',
    userToken: 'usr_secret-token',
    headers: { Authorization: 'Bearer secret-header' },
  });
  const secrets = /usr_secret-token|secret-header/;

  it('show the server, never the user token or the headers', () => {
    expect(JSON.parse(JSON.stringify(hub))).toEqual({ baseUrl: 'http://convene.test' });
    expect(JSON.stringify(hub.space('space-id', 'space-key'))).not.toMatch(secrets);
    expect(JSON.stringify(hub.withOptions({ maxRetries: 0 }))).not.toMatch(secrets);
  });

  it('save a pending join as exactly what resumes it: the four fields the README names', () => {
    const init = {
      spaceId: 'space-id',
      invitationKey: 'invitation-key',
      participantId: 'participant-id',
      pollToken: 'poll-token',
    };
    const statusUrl = 'http://convene.test/hub/space/space-id/join/participant-id';
    const saved = JSON.stringify(hub.pendingJoin({ ...init, statusUrl }));
    expect(JSON.parse(saved)).toEqual(init);
    const resumed = hub.pendingJoin(JSON.parse(saved));
    expect(resumed.toJSON()).toEqual(init);
  });
});

describe('the client’s options', () => {
  it('refuses a baseUrl that is not an absolute http(s) URL at once, not after retried requests', () => {
    for (const baseUrl of ['localhost:3000', 'http//localhost:3000', 'ftp://localhost:3000', '/hub']) {
      expect(() => new Convene({ baseUrl }), baseUrl).toThrow(ConveneError);
      expect(() => new Convene({ baseUrl }), baseUrl).toThrow(/^baseUrl must be an absolute http\(s\) URL/);
    }
    // A page on the server's origin, passing a path, is told what to pass instead.
    expect(() => new Convene({ baseUrl: '/' })).toThrow(/location\.origin/);
    for (const baseUrl of ['http://localhost:3000', 'https://convene.example.com/prefix/'])
      expect(new Convene({ baseUrl }).toJSON(), baseUrl).toEqual({ baseUrl: baseUrl.replace(/\/$/, '') });
  });

  it('waits without limit for a timeoutMs of Infinity or beyond 2^31 - 1 ms (setTimeout fired those at once)', async () => {
    // Answers after 50 ms, unless its request is aborted first (by the call's timeout).
    const slow: typeof fetch = (_input, init) =>
      new Promise((resolve, reject) => {
        const answer = () =>
          resolve(new Response('{"status":"ok"}', { headers: { 'content-type': 'application/json' } }));
        const timer = setTimeout(answer, 50);
        init?.signal?.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(new DOMException('This operation was aborted', 'AbortError'));
        });
      });
    const options = { baseUrl: 'http://convene.test', fetch: slow, maxRetries: 0, logLevel: 'off' } as const;
    expect(await new Convene({ ...options, timeoutMs: Number.POSITIVE_INFINITY }).health()).toEqual({
      status: 'ok',
    });
    expect(await new Convene(options).health({ timeoutMs: 2 ** 31 })).toEqual({ status: 'ok' });
  });

  it('tells its baseUrl, as do its space clients, without a trailing slash', () => {
    const hub = new Convene({ baseUrl: 'https://convene.example.com/prefix//' });
    expect(hub.baseUrl).toBe('https://convene.example.com/prefix');
    expect(hub.space('s', 'k').baseUrl).toBe('https://convene.example.com/prefix');
    expect(hub.withOptions({ baseUrl: 'http://localhost:3100' }).baseUrl).toBe('http://localhost:3100');
  });
});

describe('a fetch of your own', () => {
  it('is called as a plain function, as a browser’s own fetch requires (no "Illegal invocation")', async () => {
    const seen: unknown[] = [];
    // What a browser's fetch does with any other `this` (the client's options object, say).
    function strictFetch(this: unknown, input: RequestInfo | URL): Promise<Response> {
      seen.push(this);
      if (this !== undefined && this !== globalThis)
        throw new TypeError("Failed to execute 'fetch' on 'Window': Illegal invocation");
      const stream = String(input).includes('/stream');
      return Promise.resolve(
        stream
          ? new Response('{"error":"unknown key"}', {
              status: 401,
              headers: { 'content-type': 'application/json' },
            })
          : new Response('{"status":"ok"}', { headers: { 'content-type': 'application/json' } }),
      );
    }
    const hub = new Convene({
      baseUrl: 'http://convene.test',
      fetch: strictFetch,
      maxRetries: 0,
      logLevel: 'off',
    });
    expect(await hub.health()).toEqual({ status: 'ok' });
    // The stream's own fetch too: the server's 401, not a ConnectionError of the invocation.
    const stream = hub.space('space-id', 'space-key').messages.stream();
    await expect(stream[Symbol.asyncIterator]().next()).rejects.toBeInstanceOf(AuthenticationError);
    expect(seen).toHaveLength(2);
  });
});

describe('logLevel debug', () => {
  it('logs each request: operation, method, URL as errors show it, status or failure, ms; never a key, token or body', async () => {
    const spaceId = '3f2e0000-0000-4000-8000-000000000001';
    let calls = 0;
    const stub: typeof fetch = async (input) => {
      calls++;
      // The first attempt gets no answer; the retry, and the stream, are answered.
      if (calls === 1) throw new TypeError('fetch failed', { cause: new Error('socket hang up') });
      if (String(input).includes('/stream'))
        return new Response(`event: space-closed\nid: 1\ndata: {"reason":"closed"}\n\n`, {
          headers: { 'content-type': 'text/event-stream', 'request-id': 'req-stream' },
        });
      return new Response('{"id":"m-1","seq":1}', {
        status: 201,
        headers: { 'content-type': 'application/json', 'request-id': 'req-9' },
      });
    };
    const lines: string[] = [];
    const logger = { debug: (l: string) => lines.push(l), info() {}, warn() {}, error() {} };
    const hub = new Convene({
      baseUrl: 'http://agent:hunter2@convene.test',
      fetch: stub,
      logger,
      logLevel: 'debug',
      userToken: 'usr_secret-token',
      headers: { Authorization: 'Bearer proxy-secret' },
    });
    const me = hub.space(spaceId, 'spk_secret-key', 'p-1');
    await me.messages.send('the body is private', { idempotencyKey: 'idem-secret' });
    for await (const _ of me.messages.stream()) {
      // space-closed ends it
    }

    const url = `http://convene.test/hub/space/${spaceId}`;
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(
      new RegExp(
        `^\\[convene\\] sendMessage: POST ${url}/messages → fetch failed: socket hang up \\(\\d+ ms\\)$`,
      ),
    );
    expect(lines[1]).toMatch(
      new RegExp(`^\\[convene\\] sendMessage: POST ${url}/messages → 201 \\(\\d+ ms, Request-Id req-9\\)$`),
    );
    expect(lines[2]).toMatch(
      new RegExp(
        `^\\[convene\\] streamMessages: GET ${url}/messages/stream → 200 \\(\\d+ ms, Request-Id req-stream\\)$`,
      ),
    );
    for (const secret of [
      'hunter2',
      'spk_secret-key',
      'usr_secret-token',
      'proxy-secret',
      'idem-secret',
      'private',
    ])
      expect(lines.join('\n')).not.toContain(secret);

    // At the default level (warn), nothing of it.
    const quiet: string[] = [];
    await new Convene({
      baseUrl: 'http://convene.test',
      fetch: stub,
      logger: { ...logger, debug: (l: string) => quiet.push(l) },
    }).health();
    expect(quiet).toEqual([]);
  });
});

describe('link.wait', () => {
  /** A server whose link request asks for polls every 5 s and is approved at the third poll. */
  const linkServer = () => {
    let polls = 0;
    const impl: typeof fetch = async (input) => {
      const json = (body: unknown) =>
        new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json' } });
      if (String(input).endsWith('/hub/link/start'))
        return json({
          deviceCode: 'dev',
          userCode: 'ABCD-EFGH',
          verificationUri: 'http://convene.test/link',
          verificationUriComplete: 'http://convene.test/link?code=ABCD-EFGH',
          expiresIn: 600,
          interval: 5,
        });
      polls++;
      return json(polls < 3 ? { status: 'pending' } : { status: 'approved', token: 'usr_token' });
    };
    return {
      hub: new Convene({ baseUrl: 'http://convene.test', fetch: impl, logLevel: 'off' }),
      polls: () => polls,
    };
  };

  it('polls every pollIntervalMs, as a join’s wait does, and still takes the deprecated intervalMs', async () => {
    for (const options of [{ pollIntervalMs: 20 }, { intervalMs: 20 }]) {
      const server = linkServer();
      const link = await server.hub.link.start();
      const started = Date.now();
      // Well under the 5 s the server's interval would take for the two waits.
      const token = await Promise.race([
        link.wait(options),
        new Promise((resolve) => setTimeout(() => resolve('still waiting'), 2000)),
      ]);
      expect(token, JSON.stringify(options)).toBe('usr_token');
      expect(server.polls()).toBe(3);
      expect(Date.now() - started).toBeGreaterThanOrEqual(40);
    }
  });

  it('names the poll in the AbortError of a signal that ends the wait between two polls', async () => {
    const link = await linkServer().hub.link.start();
    const waiting = link.wait({ pollIntervalMs: 60_000, signal: AbortSignal.timeout(50) });
    await expect(waiting).rejects.toMatchObject({
      name: 'AbortError',
      message: 'aborted (pollLink: POST http://convene.test/hub/link/poll)',
    });
  });
});

describe('the headers a call gives its fetch', () => {
  it('are a plain object by lower-case name, the call’s own last, trimmed, never a Headers (which loads undici)', async () => {
    let seen: unknown;
    const fetch = async (_url: string | URL | Request, init?: RequestInit) => {
      seen = init?.headers;
      return new Response('{"ok":true}', {
        headers: { 'content-type': 'application/json', 'api-version': '1' },
      });
    };
    const client = new Convene({ baseUrl: 'http://127.0.0.1:9', fetch, headers: { 'X-Trace': 'client' } });
    await client
      .space('00000000-0000-4000-8000-000000000000', ` ${'a'.repeat(64)}\n`)
      .messages.send('hi', { headers: { 'x-trace': 'call' }, idempotencyKey: 'k-1' });
    expect(seen).not.toBeInstanceOf(Headers);
    expect(seen).toEqual({
      accept: 'application/json',
      'api-version': '1',
      'x-trace': 'call',
      'x-private-key': 'a'.repeat(64),
      'idempotency-key': 'k-1',
      'content-type': 'application/json',
    });
  });

  const spaceId = '00000000-0000-4000-8000-000000000000';

  it('never send an Idempotency-Key of the headers, the client’s or the call’s: the key is idempotencyKey’s', async () => {
    const sent: Record<string, string>[] = [];
    const fetch = async (url: string | URL | Request, init?: RequestInit) => {
      sent.push({ ...(init?.headers as Record<string, string>), url: `${init?.method} ${url}` });
      const body = String(url).endsWith('/hub/space')
        ? { spaceId, ownerId: spaceId, ownerPrivateKey: 'k' }
        : {};
      return new Response(JSON.stringify(body), {
        headers: { 'content-type': 'application/json', 'api-version': '1' },
      });
    };
    // One key for every write would have each replayed the first's answer.
    const client = new Convene({
      baseUrl: 'http://127.0.0.1:9',
      fetch,
      headers: { 'Idempotency-Key': 'client' },
    });
    const space = client.space(spaceId, 'a'.repeat(64));
    const call = { headers: { 'IDEMPOTENCY-KEY': 'call' } };
    // A replayed write: its idempotencyKey, else a fresh one.
    await space.messages.send('hi', { ...call, idempotencyKey: 'option' });
    await space.messages.send('hi', call);
    // A read, and a write the server never replays: none at all.
    await space.get(call);
    await client.spaces.create({ name: 'n', description: 'd' }, call);
    expect(sent.map((headers) => headers['idempotency-key'])).toEqual([
      'option',
      expect.stringMatching(/^[0-9a-f-]{36}$/),
      undefined,
      undefined,
    ]);
    expect(sent.flatMap(Object.values)).not.toContain('client');
    expect(sent.flatMap(Object.values)).not.toContain('call');
  });
});
