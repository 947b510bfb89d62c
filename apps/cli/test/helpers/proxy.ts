import { createServer, request as httpRequest, STATUS_CODES } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * What a scripted proxy does with one of the requests it plays: `lost` forwards it (the server
 * runs it) and closes the connection instead of answering; `hold` forwards it and keeps the
 * answer, the connection left open (an answer still on its way: for a Ctrl-C meanwhile); `forward` lets it through; `429`
 * refuses it for two minutes without forwarding it; `503` refuses it as a server shutting down;
 * `409` as a state conflict; `423` as a lock someone else (Gus) holds; `admit`, of a kick, approves
 * its participant with the kick's key first, then forwards it (the owner's other session admitting
 * them meanwhile).
 */
export type Step = 'lost' | 'hold' | 'forward' | '429' | '503' | '409' | '423' | 'admit';

export interface ScriptedProxy {
  url: string;
  /** How many requests it holds (`hold`) whose answer the server gave: it ran them. */
  held(): number;
  close(): Promise<void>;
}

/**
 * A proxy in front of the server at `target` whose answers to the requests whose `METHOD path`
 * matches `which` are played by `steps`, one per request in order. Everything else, and the
 * requests past the script, go through.
 */
export async function scriptedProxy(target: string, which: RegExp, ...steps: Step[]): Promise<ScriptedProxy> {
  let seen = 0;
  let held = 0;
  // Convene's version header, as its answers give it (the CLI takes an answer without it for
  // another server's).
  let apiVersion = '';
  const proxy = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const step = which.test(`${request.method} ${request.url}`) ? steps[seen++] : undefined;
    const refusal = step === undefined ? undefined : refusals[step as keyof typeof refusals];
    if (refusal) {
      response.writeHead(refusal.status, {
        'content-type': 'application/json',
        'api-version': apiVersion,
        ...refusal.headers,
      });
      response.end(JSON.stringify(refusal.body));
      return;
    }
    const headers = { ...request.headers } as Record<string, string>;
    delete headers.host;
    delete headers['content-length'];
    if (step === 'admit') {
      const approve = request.url!.replace(/\/kick$/, '/approve');
      const admitted = await fetch(`${target}${approve}`, {
        method: 'POST',
        headers: { 'x-private-key': headers['x-private-key'] ?? '' },
      });
      if (!admitted.ok) throw new Error(`the proxy could not admit: ${admitted.status}`);
    }
    const answer = await fetch(`${target}${request.url}`, {
      method: request.method!,
      headers,
      ...(chunks.length ? { body: Buffer.concat(chunks) } : {}),
    });
    const body = Buffer.from(await answer.arrayBuffer());
    apiVersion = answer.headers.get('api-version') ?? apiVersion;
    if (step === 'lost') {
      request.socket.destroy();
      return;
    }
    if (step === 'hold') {
      held++;
      return;
    }
    const passed = [...answer.headers].filter(
      ([name]) => !['content-length', 'content-encoding', 'transfer-encoding', 'connection'].includes(name),
    );
    response.writeHead(answer.status, Object.fromEntries(passed));
    response.end(body);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    held: () => held,
    close: async () => {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    },
  };
}

/** The answers of the steps that refuse without forwarding. */
const refusals = {
  '429': {
    status: 429,
    headers: { 'retry-after': '120' },
    body: { error: 'rate limit exceeded', code: 'rate_limited' },
  },
  '409': { status: 409, headers: {}, body: { error: 'participant is already muted', code: 'conflict' } },
  '423': {
    status: 423,
    headers: {},
    body: { error: 'the artifact is locked by Gus', code: 'lock_held', lockedBy: 'gus', lockedByName: 'Gus' },
  },
  '503': {
    status: 503,
    headers: { 'retry-after': '0' },
    body: { error: 'the server is shutting down; retry shortly', code: 'shutting_down' },
  },
} as const;

export interface Gateway {
  url: string;
  /**
   * What it answers instead of passing requests on, as a reverse proxy does while the server
   * behind it is away (502, 503, 504: its own HTML page, not Convene's); undefined passes them on.
   */
  away: number | undefined;
  /** How many requests it answered so while away. */
  refused(): number;
  close(): Promise<void>;
}

/**
 * A reverse proxy in front of the server at `target`, as nginx is: it passes every request on,
 * streamed both ways (an event stream goes through as it comes), except while `away` says what
 * to answer instead.
 */
export async function gateway(target: string): Promise<Gateway> {
  const upstream = new URL(target);
  let refused = 0;
  const state: Gateway = {
    url: '',
    away: undefined,
    refused: () => refused,
    close: async () => {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    },
  };
  const proxy = createServer((request, response) => {
    if (state.away !== undefined) {
      refused++;
      const title = `${state.away} ${STATUS_CODES[state.away]}`;
      response.writeHead(state.away, { 'content-type': 'text/html' });
      response.end(
        `<html><head><title>${title}</title></head><body><h1>${title}</h1><hr>nginx</body></html>`,
      );
      return;
    }
    const passed = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: request.method,
        path: request.url,
        headers: { ...request.headers, host: upstream.host },
      },
      (answer) => {
        response.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(response);
      },
    );
    passed.on('error', () => response.destroy());
    response.on('close', () => passed.destroy());
    request.pipe(passed);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  return state;
}
