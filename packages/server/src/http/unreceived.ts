import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/**
 * When the server closes, a connection whose request has not arrived in full (its headers, or its
 * body, still coming) is closed unanswered; a request received in full is answered first, as every
 * request in flight is. Node's close waits for every connection with a request under way, and one
 * a client stopped sending half-way is under way until Node's own timeouts (60 s and more): one
 * such client held SIGTERM until serve's 14 s deadline, which then exited 1 with the database
 * still open. A request not received in full has reached no handler, so nothing of it ran.
 */
export function closeUnreceivedAtShutdown(app: FastifyInstance): void {
  const server: Server = app.server;
  const open = new Set<Socket>();
  /** Per connection, its requests whose answer has not finished. */
  const answering = new WeakMap<Socket, Set<IncomingMessage>>();
  let closing = false;

  /** Closed unless a request of it was received in full and is being answered. */
  const settle = (socket: Socket) => {
    const requests = answering.get(socket);
    if (requests && [...requests].some((request) => request.complete)) return;
    // Ended once what was written has gone out (an answer that has just finished).
    socket.destroySoon();
  };

  server.on('connection', (socket: Socket) => {
    // A connection accepted while the close begins has sent nothing worth waiting for.
    if (closing) return void socket.destroy();
    open.add(socket);
    // 'close' comes once: `on`, as `once` would hold a wrapper of its own as long as the connection.
    socket.on('close', () => open.delete(socket));
  });
  server.on('request', (request: IncomingMessage, response) => {
    const socket = request.socket;
    const requests = answering.get(socket) ?? new Set();
    answering.set(socket, requests.add(request));
    // Likewise for the response (an event stream's lasts for hours).
    response.on('close', () => {
      requests.delete(request);
      if (closing) settle(socket);
    });
  });
  app.addHook('preClose', async () => {
    closing = true;
    // Idle keep-alive connections among them, closed without a word, as Fastify's own close does.
    for (const socket of open) settle(socket);
  });
}
