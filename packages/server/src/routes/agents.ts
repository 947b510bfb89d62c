import { type TAskResult, ZAskRequest, ZAskResult } from '@convene/contract';
import { type AskDocument, ask, getAgentCard, indexAskDocuments } from '@convene/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { renderAgentCard } from '../agents/agent-card';
import { GUIDES, guideDocuments, operationDocuments, readGuide } from '../agents/ask-documents';
import { renderLlmsTxt } from '../agents/llms-txt';
import { toHttpError } from '../http/errors';
import { sendError } from '../http/policy';
import { registerMcpRoute } from '../mcp/http';
import { tools } from '../mcp/tools';
import { buildOpenApiDocument, rawPaths } from '../openapi';
import { headerValue } from '../trpc';
import type { RawRouteOptions } from '.';

/** Agent-facing surfaces: the MCP endpoint, natural-language /ask, agent cards and /llms.txt. */
export async function registerAgentRoutes(app: FastifyInstance, options: RawRouteOptions): Promise<void> {
  const { deps, config } = options;
  const publicUrl = config.publicUrl;
  documentAgentRoutes();

  registerMcpRoute(app, { deps });

  // /ask: the documentation is written to the database on first use, not at every start-up.
  let indexed: Promise<void> | undefined;
  const ensureIndexed = () => {
    indexed ??= indexAskDocuments({ db: deps.db, documents: askDocuments(publicUrl) }).catch((error) => {
      indexed = undefined;
      throw error;
    });
    return indexed;
  };

  const answer = async (request: FastifyRequest, reply: FastifyReply, input: unknown) => {
    const parsed = ZAskRequest.safeParse(input);
    if (!parsed.success) {
      const { status, body, headers } = toHttpError(parsed.error, publicUrl);
      return sendError(reply, status, body, headers);
    }
    await ensureIndexed();
    const result = await ask({ deps, query: parsed.data.query });
    if (parsed.data.prefer?.streaming === true || wantsEventStream(request))
      return streamAnswer(reply, result);
    return reply.type('application/json; charset=utf-8').send(result);
  };

  app.get('/ask', async (request, reply) => {
    const { query } = request.query as { query?: string | string[] };
    return answer(request, reply, { query: Array.isArray(query) ? query[0] : (query ?? '') });
  });
  app.post('/ask', async (request, reply) => answer(request, reply, request.body ?? {}));

  // Agent cards: any key of the space opens one; the invitation key is the usual one.
  app.get('/hub/space/:spaceId/agent.md', async (request, reply) => {
    const { spaceId } = request.params as { spaceId: string };
    const { key: queryKey } = request.query as { key?: string | string[] };
    const key =
      (Array.isArray(queryKey) ? queryKey[0] : queryKey) ||
      headerValue(request, 'x-private-key') ||
      undefined;
    const card = await getAgentCard({ deps, spaceId, key });
    return reply
      .type('text/markdown; charset=utf-8')
      .header('Cache-Control', 'no-store')
      .header('X-Content-Type-Options', 'nosniff')
      .send(renderAgentCard(card, key ?? '', publicUrl));
  });

  const agentGuide = readGuide(GUIDES[0].url, publicUrl) ?? '';
  app.get('/agent-guide.md', async (_request, reply) =>
    reply
      .type('text/markdown; charset=utf-8')
      .header('Cache-Control', 'public, max-age=300')
      .send(agentGuide),
  );

  const llmsTxt = renderLlmsTxt(publicUrl);
  app.get('/llms.txt', async (_request, reply) =>
    reply.type('text/plain; charset=utf-8').header('Cache-Control', 'public, max-age=300').send(llmsTxt),
  );
}

/** What /ask searches of the documentation: every operation of the API, and the guides by section. */
function askDocuments(publicUrl: string): AskDocument[] {
  const toolNames = new Set(tools.map((t) => t.name));
  const documents = operationDocuments(
    buildOpenApiDocument(publicUrl) as unknown as { paths?: Record<string, Record<string, unknown>> },
    toolNames,
  );
  for (const guide of GUIDES) {
    const text = readGuide(guide.url, publicUrl);
    if (text) documents.push(...guideDocuments(guide.file, text));
  }
  return documents;
}

/** `Accept: text/event-stream` asks for the stream, unless JSON is acceptable too. */
function wantsEventStream(request: FastifyRequest): boolean {
  const accept = headerValue(request, 'accept') ?? '';
  return accept.includes('text/event-stream') && !accept.includes('application/json');
}

/** The answer as Server-Sent Events: `start`, one `result` per item, then `complete`. */
function streamAnswer(reply: FastifyReply, result: TAskResult): void {
  reply.hijack();
  const raw = reply.raw;
  // Headers set by the policy hooks (API-Version, rate limits) are not flushed after hijack.
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) raw.setHeader(name, value as string | number | readonly string[]);
  }
  raw.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache',
    'X-Accel-Buffering': 'no',
  });
  const send = (event: string, data: unknown) =>
    raw.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  send('start', { query_id: result.query_id, query: result.query, _meta: result._meta });
  for (const item of result.results) send('result', item);
  send('complete', { query_id: result.query_id, count: result.results.length });
  raw.end();
}

function documentAgentRoutes(): void {
  const errorJson = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };
  const error = (description: string) => ({ description, content: errorJson });
  const askResponses = {
    '200': {
      description:
        'Ranked results (schema.org objects: WebAPI or TechArticle for documentation, Event for public spaces). With prefer.streaming or `Accept: text/event-stream`: Server-Sent Events `start` {query_id, query}, one `result` per item, `complete` {query_id, count}.',
      content: {
        'application/json': { schema: ZAskResult },
        'text/event-stream': { schema: { type: 'string' } },
      },
    },
    '400': error('Empty or missing query'),
    '429': error('Rate limit exceeded; carries Retry-After'),
  };
  rawPaths['/ask'] = {
    get: {
      operationId: 'askByQuery',
      tags: ['meta'],
      summary: 'Natural-language search over the documentation and public open spaces (query string)',
      security: [],
      parameters: [{ name: 'query', in: 'query', required: true, schema: { type: 'string', minLength: 1 } }],
      responses: askResponses,
    },
    post: {
      operationId: 'ask',
      tags: ['meta'],
      summary: 'Natural-language search over the documentation and public open spaces',
      security: [],
      requestBody: { required: true, content: { 'application/json': { schema: ZAskRequest } } },
      responses: askResponses,
    },
  };
  rawPaths['/mcp'] = {
    post: {
      operationId: 'mcp',
      tags: ['meta'],
      summary:
        'Model Context Protocol (Streamable HTTP, stateless): one tool per operation; the space key as the privateKey tool argument or the X-Private-Key header',
      security: [],
      requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' } } } },
      responses: {
        '200': {
          description: 'JSON-RPC response',
          content: { 'application/json': { schema: { type: 'object' } } },
        },
        '202': { description: 'Notification accepted' },
        '429': error('Rate limit exceeded; carries Retry-After'),
      },
    },
  };
  rawPaths['/hub/space/{spaceId}/agent.md'] = {
    get: {
      operationId: 'getAgentCard',
      tags: ['participants'],
      summary:
        'The agent card (agentLink): markdown telling an agent how to join and take part, with the key filled in (any key of the space, usually the invitation key)',
      security: [{ spaceKey: [] }],
      parameters: [
        { name: 'spaceId', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } },
        {
          name: 'key',
          in: 'query',
          required: false,
          description: 'A key of the space (the invitation key); the X-Private-Key header also works',
          schema: { type: 'string' },
        },
      ],
      responses: {
        '200': { description: 'The card', content: { 'text/markdown': { schema: { type: 'string' } } } },
        '401': error('Key missing, unknown or dead; carries WWW-Authenticate'),
        '404': error('No such space'),
        '429': error('Rate limit exceeded; carries Retry-After'),
      },
    },
  };
  const text = (path: string, operationId: string, summary: string, type: string) => {
    rawPaths[path] = {
      get: {
        operationId,
        tags: ['meta'],
        summary,
        security: [],
        responses: { '200': { description: summary, content: { [type]: { schema: { type: 'string' } } } } },
      },
    };
  };
  text(
    '/llms.txt',
    'getLlmsTxt',
    'llms.txt: where a language model finds the guides, the API and MCP',
    'text/plain',
  );
  text(
    '/agent-guide.md',
    'getAgentGuide',
    'The agent guide: how an agent joins a space and takes part, over REST or MCP',
    'text/markdown',
  );
}
