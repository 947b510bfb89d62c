// Baseline: a bare SSE broadcaster. Publishing answers first, then writes one shared frame to
// every subscriber, as Convene's hub does.
import { createServer, type ServerResponse } from 'node:http';
import { answerMemoryProbes } from './processes';

const subscribers = new Set<ServerResponse>();
let seq = 0;
const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/sse') {
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
    res.write(': hello\n\n');
    req.socket.setNoDelay(true);
    subscribers.add(res);
    res.on('close', () => subscribers.delete(res));
    return;
  }
  if (req.method === 'POST' && req.url === '/publish') {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      const { content } = JSON.parse(body) as { content: string };
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': 11 });
      res.end('{"ok":true}');
      seq++;
      const frame = `id: ${seq}\nevent: message\ndata: ${JSON.stringify({ content, seq })}\n\n`;
      setImmediate(() => {
        for (const sub of subscribers) sub.write(frame);
      });
    });
    return;
  }
  res.writeHead(404).end();
});
// Fastify's default (Convene's), where Node's own 5 s closed the publisher's kept-alive sockets
// during the fan-out's pauses between slices, and a full run ended on the ECONNRESET of a request
// sent on one as it closed.
server.keepAliveTimeout = 72_000;
server.listen(0, '127.0.0.1', () => {
  process.send?.({ ready: (server.address() as { port: number }).port });
});
answerMemoryProbes();
process.on('SIGTERM', () => {
  for (const sub of subscribers) sub.end();
  server.close(() => process.exit(0));
});
