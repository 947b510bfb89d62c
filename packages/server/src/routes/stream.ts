import { ZTimestampQuery } from '@convene/contract';
import { KeyRequiredError, openStream, ShuttingDownError, ValidationError } from '@convene/core';
import type { RouteHandlerMethod } from 'fastify';
import { z } from 'zod';
import { StreamConnection } from '../events/stream-connection';
import { admitStream } from '../http/client';
import { takeOver } from '../http/reply';
import { headerValue } from '../rest/caller';
import type { RouteScope } from './scope';

/**
 * GET /hub/space/{spaceId}/messages/stream: Server-Sent Events. Errors before the stream starts
 * are thrown to the app's error handler (JSON, like every error); after that, the stream
 * subscribes, replays its backlog and goes live.
 */
/** The stream's query parameter that is parsed (`key` is a credential, checked as one). */
const ZStreamQuery = z.object({ timestamp: ZTimestampQuery.optional() });

export function streamHandler({ app, config, deps }: RouteScope): RouteHandlerMethod {
  return async (request, reply) => {
    const { spaceId } = request.params as { spaceId: string };
    const query = request.query as Record<string, string | string[] | undefined>;
    const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
    // The header wins; `?key=` is for clients that cannot set headers (EventSource in a browser).
    const key = headerValue(request, 'x-private-key') || first(query.key) || undefined;
    // No key at all is said first, before what the query gets wrong, as for every keyed operation.
    if (!key) throw new KeyRequiredError();

    // Empty (`?timestamp=`) is none, as listMessages takes it.
    const rawTimestamp = first(query.timestamp) || undefined;
    // Parsed as a field, so that a refusal names it ("timestamp: not an RFC 3339 date-time"), as listMessages's does.
    const { timestamp } = ZStreamQuery.parse({ timestamp: rawTimestamp });
    let lastEventId: number | undefined;
    const rawLastEventId = headerValue(request, 'last-event-id')?.trim();
    if (rawLastEventId) {
      if (!/^\d{1,15}$/.test(rawLastEventId))
        throw new ValidationError('Last-Event-ID must be an event id sent by this stream');
      lastEventId = Number(rawLastEventId);
    }

    const hub = app.eventHub;
    if (!hub || hub.isClosed) throw new ShuttingDownError();

    // Subscribe first, so that nothing committed after the starting position can be missed.
    const connection = new StreamConnection({
      hub,
      res: reply.raw,
      spaceId,
      clock: deps.clock,
      lastEventId,
      timestamp,
      maxQueuedBytes: config.streamMaxQueuedBytes,
      // An open stream keeps its participant seen (lastSeenAt) from its start to its end, written
      // by Presence's one timer (presenceHeldMs), not one per stream.
      presence: key ? { keeper: app.presence, key } : undefined,
      log: request.log,
    });
    let start: Awaited<ReturnType<typeof openStream>>;
    let release: () => void;
    try {
      // The space's messages are notified from here on; then the starting position is taken.
      // HEAD answers the stream's status and headers and never goes live.
      if (request.method !== 'HEAD') await hub.ready(spaceId);
      start = await openStream({ deps, spaceId, key });
      // At most 20 open streams per key and 200 per address across every node (429 beyond),
      // counted once the key is known to be good: a refused stream holds no slot. The hashes are
      // the request's rate-limit client's (its key, as presented, and its address bucket).
      release = await admitStream(hub, request);
    } catch (error) {
      connection.abandon();
      throw error;
    }

    const res = takeOver(reply);
    // 'close' comes once: `on`, as `once` would hold a wrapper of its own as long as the stream.
    res.on('close', release);
    // The client left (or the server began closing) while the stream was being authorised.
    if (connection.isEnded) {
      release();
      res.destroy();
      return;
    }
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache',
      'X-Accel-Buffering': 'no',
      Connection: 'keep-alive',
    });
    res.flushHeaders();
    // HEAD mirrors GET's status and headers; it has no body to stream.
    if (request.method === 'HEAD') {
      connection.abandon();
      res.end();
      return;
    }
    request.raw.socket.setNoDelay(true);
    request.raw.socket.setTimeout(0);
    void connection.begin(start);
  };
}
