import { type TAskResult, ZAskRequest } from '@convene/contract';
import { type AskDocument, ask, getAgentCard, indexAskDocuments } from '@convene/core';
import type { FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { renderAgentCard } from '../agents/agent-card';
import { GUIDES, guideDocuments, operationDocuments, readGuide } from '../agents/ask-documents';
import { renderLlmsTxt } from '../agents/llms-txt';
import { MEDIA, sendRaw, takeOver } from '../http/reply';
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
    const { query, prefer } = ZAskRequest.parse(input);
    await ensureIndexed();
    const result = await ask({ deps, query });
    if (prefer?.streaming === true || wantsEventStream(request)) return streamAnswer(reply, result);
    return sendRaw(reply, { type: MEDIA.json, body: result });
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
    return sendRaw(reply, {
      type: MEDIA.markdown,
      body: renderAgentCard(card, key ?? '', config.publicUrl),
      cache: 'no-store',
      nosniff: true,
    });
  };
}

export function agentGuideHandler({ config }: RouteScope): RouteHandlerMethod {
  const agentGuide = readGuide(GUIDES[0].url, config.publicUrl) ?? '';
  return async (_request, reply) =>
    sendRaw(reply, { type: MEDIA.markdown, body: agentGuide, cache: 'public' });
}

export function llmsTxtHandler({ config }: RouteScope): RouteHandlerMethod {
  const llmsTxt = renderLlmsTxt(config.publicUrl);
  return async (_request, reply) => sendRaw(reply, { type: MEDIA.text, body: llmsTxt, cache: 'public' });
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
  const raw = takeOver(reply);
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
