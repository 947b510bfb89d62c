import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { errorBody } from './error-body';
import { MEDIA } from './reply';
import { REQUEST_ID_HEADER } from './request-id';

/** A request Node's HTTP parser refused: what it answers, and why. */
function refusalOf(error: NodeJS.ErrnoException & { reason?: unknown }): { status: number; message: string } {
  if (error.code === 'HPE_HEADER_OVERFLOW')
    return { status: 431, message: 'request header fields too large (16 KiB at most in all)' };
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return { status: 408, message: 'the request did not arrive in time' };
  // llhttp's reason names what it could not parse ("Invalid header value char"), never the bytes.
  const reason = typeof error.reason === 'string' && error.reason ? `: ${error.reason}` : '';
  return { status: 400, message: `malformed HTTP request${reason}` };
}

/** Sockets already answered: the parser may report the rest of a refused request again. */
const answered = new WeakSet<Socket>();

/**
 * Fastify's `clientErrorHandler`: requests Node's HTTP parser refuses (headers over 16 KiB, a
 * malformed request line or header, headers that trickle past the deadline) never reach Fastify's
 * hooks, and its default answer (`{error, message, statusCode}`, no code) broke the error shape
 * every other answer has. Here they answer as the rest do: JSON `{error, code}` (the generic code
 * of the status), `Request-Id` and `API-Version`, then the connection closes. The request gets its
 * log line, under that id. Nothing is written when the socket is gone or a response on it has
 * begun (Node's own rule: it would corrupt what the client reads).
 */
export function clientErrorHandler(apiVersion: string) {
  return function onClientError(
    this: { log: FastifyBaseLogger },
    error: NodeJS.ErrnoException,
    socket: Socket,
  ): void {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    if (answered.has(socket)) {
      socket.destroy();
      return;
    }
    answered.add(socket);
    const { status, message } = refusalOf(error);
    const id = randomUUID();
    this.log.info(
      { reqId: id, remoteAddress: socket.remoteAddress, res: { statusCode: status }, err: error },
      'request refused by the HTTP parser',
    );
    const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (!socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    answerAndClose(socket, status, message, id, apiVersion);
  };
}

/**
 * A `CONNECT` (a proxy's tunnel): Node hands it to the server's `connect` listeners, never to its
 * request handler, and without one closed the connection with no answer at all. This is no
 * proxy: a JSON 400 as every other refusal, then the connection closes.
 */
export function connectRefusal(apiVersion: string, log: FastifyBaseLogger) {
  return (request: IncomingMessage, socket: Duplex): void => {
    // Handed over by Node: its errors (a reset) are this listener's to take, or they would throw.
    socket.on('error', () => socket.destroy());
    const id = randomUUID();
    log.info(
      { reqId: id, remoteAddress: request.socket.remoteAddress, res: { statusCode: 400 } },
      'CONNECT refused',
    );
    answerAndClose(socket, 400, 'CONNECT is not served: this is no proxy', id, apiVersion);
  };
}

/** A JSON error written straight to the socket, which then closes. */
function answerAndClose(
  socket: Duplex,
  status: number,
  message: string,
  id: string,
  apiVersion: string,
): void {
  const body = JSON.stringify(errorBody(status, message));
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
    `Content-Type: ${MEDIA.json}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    `${REQUEST_ID_HEADER}: ${id}`,
    `API-Version: ${apiVersion}`,
    'Cache-Control: no-store',
    'Connection: close',
  ];
  // Ended, then closed once written: a close with the answer still buffered would lose it.
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`, () => socket.destroy());
}
