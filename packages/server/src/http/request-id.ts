import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import { looksLikeCredential } from './redact';

/** The response header naming the request; the same id is the `reqId` of its log lines. */
export const REQUEST_ID_HEADER = 'Request-Id';

/**
 * An id a client (or a proxy in front) may choose, echoed so it can follow one request through
 * its own logs and ours: short, and of characters that cannot forge a log line or a header.
 */
const WELL_FORMED = /^[A-Za-z0-9._:-]{1,128}$/;

function chosenId(req: IncomingMessage): string | undefined {
  for (const name of ['request-id', 'x-request-id']) {
    const value = req.headers[name];
    // One shaped as a key is not echoed or logged (a client that sent its key there by mistake).
    if (typeof value === 'string' && WELL_FORMED.test(value) && !looksLikeCredential(value)) return value;
  }
  return undefined;
}

/**
 * Request ids for every answer, given once: `genReqId` is Fastify's (the id of the request and
 * of its log lines), and `stamp` sets the `Request-Id` header on the raw response as the request
 * arrives, before Fastify routes it. So every answer carries it, also those Fastify gives without
 * running a hook (503 while closing, an unroutable URL), hijacked ones (the event stream, MCP),
 * and idempotent replays, which never replay the first answer's id.
 */
export function requestIds() {
  const ids = new WeakMap<IncomingMessage, string>();
  const idOf = (req: IncomingMessage): string => {
    let id = ids.get(req);
    if (id === undefined) {
      id = chosenId(req) ?? randomUUID();
      ids.set(req, id);
    }
    return id;
  };
  return {
    genReqId: idOf,
    /** Registers the stamping listener first on `server`, ahead of Fastify's own. */
    stamp(server: Server): void {
      server.prependListener('request', (req, res) => {
        res.setHeader(REQUEST_ID_HEADER, idOf(req));
      });
    },
  };
}
