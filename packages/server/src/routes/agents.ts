import { type TAskResult, ZAskRequest } from '@convene/contract';
import { type AskDocument, ask, getAgentCard, indexAskDocuments } from '@convene/core';
import type { FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { renderAgentCard } from '../agents/agent-card';
import { GUIDES, guideDocuments, operationDocuments, readGuide } from '../agents/ask-documents';
import { renderLlmsTxt } from '../agents/llms-txt';
import { toHttpError } from '../http/errors';
import { sendError } from '../http/policy';
import { headerValue } from '../rest/caller';
import type { RouteScope } from './scope';

/**
 * `/ask` (GET with `?query=`, POST with the contract's body): natural-language search. The
 * documentation is written to the database on first use, not at every start-up.
 */
export function askHandler({ deps, config, api }: RouteScope): RouteHandlerMethod {
  let indexed: Promise<void> | undefined;
  const ensureIndexed = () => {
    indexed ??= indexAskDocuments({ db: deps.db, documents: askDocuments(config.publicUrl, api) }).catch(
      (error) => {
        indexed = undefined;
        throw error;
      },
    );
    return indexed;
  };
  return async (request, reply) => {
    let input: unknown = request.body ?? {};
    if (request.method !== 'POST') {
      const { query } = request.query as { query?: string | string[] };
      input = { query: Array.isArray(query) ? query[0] : (query ?? '') };
    }
    const parsed = ZAskRequest.safeParse(input);
    if (!parsed.success) {
      const { status, body, headers } = toHttpError(parsed.error, config.publicUrl);
      return sendError(reply, status, body, headers);
    }
    await ensureIndexed();
    const result = await ask({ deps, query: parsed.data.query });
    if (parsed.data.prefer?.streaming === true || wantsEventStream(request))
      return streamAnswer(reply, result);
    return reply.type('application/json; charset=utf-8').send(result);
  };
}

/** Agent cards: any key of the space opens one; the invitation key is the usual one. */
export function agentCardHandler({ deps, config }: RouteScope): RouteHandlerMethod {
  return async (request, reply) => {
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
      .send(renderAgentCard(card, key ?? '', config.publicUrl));
  };
}

export function agentGuideHandler({ config }: RouteScope): RouteHandlerMethod {
  const agentGuide = readGuide(GUIDES[0].url, config.publicUrl) ?? '';
  return async (_request, reply) =>
    reply
      .type('text/markdown; charset=utf-8')
      .header('Cache-Control', 'public, max-age=300')
      .send(agentGuide);
}

export function llmsTxtHandler({ config }: RouteScope): RouteHandlerMethod {
  const llmsTxt = renderLlmsTxt(config.publicUrl);
  return async (_request, reply) =>
    reply.type('text/plain; charset=utf-8').header('Cache-Control', 'public, max-age=300').send(llmsTxt);
}

/** What /ask searches of the documentation: every operation of the API, and the guides by section. */
function askDocuments(publicUrl: string, api: RouteScope['api']): AskDocument[] {
  const toolNames = new Set(api.tools.map((t) => t.name));
  const documents = operationDocuments(
    api.openapi() as unknown as { paths?: Record<string, Record<string, unknown>> },
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
