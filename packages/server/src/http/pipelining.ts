import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Requests of one connection that run at once. HTTP/1.1 answers leave in the order the requests
 * came, so running more of one connection's requests together only hides latency; the clients
 * that pipeline at all do it a few deep (undici's `pipelining: 10`, autocannon's `-p 10`), and
 * browsers, curl and the SDK not at all. 16 leaves such a client its whole depth.
 */
export const RUNNING_PER_CONNECTION = 16;

/**
 * Requests of one connection parsed beyond those, waiting their turn (the connection is read no
 * further meanwhile); one more and the connection is closed. No client has this many requests
 * out unanswered, and each waiting one holds Node's request and response objects (1.7 KB).
 */
export const WAITING_PER_CONNECTION = 64;

const GATE = Symbol('pipelining gate');

interface Gate {
  running: number;
  /** Requests and their responses, alternately, in the order they came. */
  waiting: (IncomingMessage | ServerResponse)[];
}

/** Node's own state of a server socket this relies on: its pause flag and its HTTP parser. */
type HttpSocket = Socket & {
  _paused?: boolean;
  parser?: { pause(): void; resume(): void } | null;
  [GATE]?: Gate;
};

/**
 * Node's HTTP server parses every request of each chunk it reads (64 KiB: 1,700 pipelined
 * `GET /api/health`) and emits them all at once; it stops reading only when its answers back up.
 * A client that wrote thousands of requests and never read had them all running together (trial
 * 51: 40 connections took a node from 1 GB to 2.5 GB and every other user's requests waited 20 s
 * and more). Here a connection's requests reach the server's listeners (Fastify, the request ids,
 * the shutdown's count) at most RUNNING_PER_CONNECTION at a time, in order; those parsed beyond
 * wait, costing nothing but their objects, and the connection is read no further (as Node's own
 * backpressure does it: its `_paused` flag, then the socket and its parser paused) until the
 * waiting ones have all started. More than WAITING_PER_CONNECTION waiting closes the connection.
 * A request the client keeps on sending its body (the last one parsed) starts with reading on.
 *
 * The gate sits on the server's `emit`: the `request` listeners run for a request once it starts,
 * never for one that waits. One counter per connection; nothing allocated per request.
 */
export function boundPipelining(server: Server, onOverflow: (socket: Socket) => void): void {
  const emit = server.emit as (this: Server, event: string | symbol, ...args: unknown[]) => boolean;
  const start = (req: IncomingMessage, res: ServerResponse, gate: Gate): void => {
    gate.running++;
    res.on('close', answered);
    emit.call(server, 'request', req, res);
  };
  /** A response is out (or its connection gone): the next waiting request starts. */
  function answered(this: ServerResponse): void {
    const socket = this.req.socket as HttpSocket;
    const gate = socket[GATE];
    if (gate === undefined) return;
    gate.running--;
    if (socket.destroyed) {
      gate.waiting.length = 0;
      return;
    }
    while (gate.running < RUNNING_PER_CONNECTION && gate.waiting.length > 0) {
      const req = gate.waiting.shift() as IncomingMessage;
      start(req, gate.waiting.shift() as ServerResponse, gate);
    }
    if (gate.waiting.length === 0) readOn(socket);
  }
  server.emit = function gatedEmit(this: Server, event: string | symbol, a?: unknown, b?: unknown): boolean {
    // `arguments` passed on whole: another event keeps its arity, and no array is made per call.
    // biome-ignore lint/complexity/noArguments: a rest parameter would allocate an array per request
    if (event !== 'request') return Reflect.apply(emit, this, arguments);
    const req = a as IncomingMessage;
    const res = b as ServerResponse;
    const socket = req.socket as HttpSocket;
    // What a closed connection had parsed: nobody reads its answer.
    if (socket.destroyed) return true;
    let gate = socket[GATE];
    if (gate === undefined) {
      gate = { running: 0, waiting: [] };
      socket[GATE] = gate;
      socket.on('resume', keepWaiting);
    }
    if (gate.running < RUNNING_PER_CONNECTION && gate.waiting.length === 0) {
      start(req, res, gate);
      return true;
    }
    if (gate.waiting.length >= WAITING_PER_CONNECTION * 2) {
      gate.waiting.length = 0;
      onOverflow(socket);
      socket.destroy();
      return true;
    }
    gate.waiting.push(req, res);
    // Emitted while the parser reads a chunk: Node pauses the parser once it is through it.
    socket._paused = true;
    socket.pause();
    return true;
  } as Server['emit'];
}

/**
 * Node resumes a socket it paused once its answers have drained, and a request's body read
 * resumes it too: while requests wait, reading stays off (Node's listener started it in the
 * same turn: nothing was read in between).
 */
function keepWaiting(this: HttpSocket): void {
  if (!this[GATE]?.waiting.length) return;
  this._paused = true;
  this.pause();
  this.parser?.pause();
}

/** Reading on, as Node's own `socketOnDrain` does it; left to Node while its answers back up. */
function readOn(socket: HttpSocket): void {
  if (!socket._paused || socket.writableNeedDrain) return;
  socket._paused = false;
  socket.parser?.resume();
  socket.resume();
}
