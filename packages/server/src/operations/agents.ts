import { operations as contract, ZAskResult } from '@convene/contract';
import { mcpHandler } from '../mcp/http';
import { agentCardHandler, agentGuideHandler, askHandler, llmsTxtHandler } from '../routes/agents';
import { type Declaration, rawOperation, route } from './declare';

const errorJson = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };
const error = (description: string) => ({ description, content: errorJson });

const askAnswer = {
  description:
    'Ranked results (schema.org objects: WebAPI or TechArticle for documentation, Event for public spaces). With prefer.streaming or `Accept: text/event-stream`: Server-Sent Events `start` {query_id, query}, one `result` per item, `complete` {query_id, count}.',
  content: {
    'application/json': { schema: ZAskResult },
    'text/event-stream': { schema: { type: 'string' } },
  },
};

const mcpSessionHeader = (required: boolean) => ({
  name: 'Mcp-Session-Id',
  in: 'header',
  required,
  description: 'The session id initialize answered',
  schema: { type: 'string' },
});

const text = (operationId: string, summary: string, type: string) => ({
  operationId,
  tags: ['meta'],
  summary,
  security: [],
  responses: { '200': { description: summary, content: { [type]: { schema: { type: 'string' } } } } },
});

/** What agents use besides REST: MCP, natural-language /ask, agent cards and guides. */
export const agentOperations: Declaration[] = [
  rawOperation(contract.ask, {
    openapi: { responses: { '200': askAnswer, '400': { description: 'Empty or missing query' } } },
    also: {
      GET: {
        openapi: {
          operationId: 'askByQuery',
          tags: ['meta'],
          summary: 'Natural-language search over the documentation and public open spaces (query string)',
          security: [],
          parameters: [
            { name: 'query', in: 'query', required: true, schema: { type: 'string', minLength: 1 } },
          ],
          responses: {
            '200': askAnswer,
            '400': error('Empty or missing query'),
            '429': error('Rate limit exceeded; carries Retry-After'),
          },
        },
      },
    },
    handler: askHandler,
  }),
  route('/mcp', {
    POST: {
      operationId: 'mcp',
      tags: ['meta'],
      summary:
        'Model Context Protocol (Streamable HTTP): one tool per operation, resources (convene://space/{spaceId}/messages, convene://space/{spaceId}/artifact/{artifactId}) with subscriptions; the space key as the privateKey tool argument or the X-Private-Key header. initialize answers an Mcp-Session-Id; a call with a progressToken answers as an event stream carrying its progress notifications',
      security: [],
      parameters: [mcpSessionHeader(false)],
      requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' } } } },
      responses: {
        '200': {
          description: 'JSON-RPC response (an event stream when a call asked for progress)',
          content: {
            'application/json': { schema: { type: 'object' } },
            'text/event-stream': { schema: { type: 'string' } },
          },
        },
        '202': { description: 'Notification accepted' },
        '400': error(
          'A body that is no JSON-RPC 2.0 message or batch (at most 100 calls, initialize alone), not application/json, or an unsupported MCP-Protocol-Version',
        ),
        '403': error('An Origin other than the service’s own (DNS rebinding)'),
        '404': error('Unknown or expired Mcp-Session-Id: initialize again'),
        '406': error('Accept lacks application/json or text/event-stream'),
        '429': error('Rate limit exceeded; carries Retry-After'),
      },
    },
    GET: {
      operationId: 'mcpNotifications',
      tags: ['meta'],
      summary:
        'A session’s notification stream: notifications/resources/updated for each subscribed resource that changes, whichever node serves it',
      security: [],
      parameters: [mcpSessionHeader(true)],
      responses: {
        '200': {
          description: 'JSON-RPC notifications as Server-Sent Events',
          content: { 'text/event-stream': { schema: { type: 'string' } } },
        },
        '400': error('No Mcp-Session-Id'),
        '404': error('Unknown or expired Mcp-Session-Id'),
        '406': error('The client does not accept text/event-stream'),
      },
    },
    DELETE: {
      operationId: 'mcpEndSession',
      tags: ['meta'],
      summary: 'End an MCP session and its subscriptions',
      security: [],
      parameters: [mcpSessionHeader(true)],
      responses: {
        '200': { description: 'Ended', content: { 'application/json': { schema: { type: 'object' } } } },
        '404': error('Unknown or expired Mcp-Session-Id'),
      },
    },
    handler: mcpHandler,
    // Each call reads its own: a tool's privateKey or userToken argument, or the connection's headers.
    reads: 'any',
  }),
  route('/hub/space/{spaceId}/agent.md', {
    GET: {
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
    handler: agentCardHandler,
    reads: ['spaceKey'],
  }),
  route('/llms.txt', {
    GET: text(
      'getLlmsTxt',
      'llms.txt: where a language model finds the guides, the API and MCP',
      'text/plain',
    ),
    handler: llmsTxtHandler,
  }),
  route('/agent-guide.md', {
    GET: text(
      'getAgentGuide',
      'The agent guide: how an agent joins a space and takes part, over REST or MCP',
      'text/markdown',
    ),
    handler: agentGuideHandler,
  }),
];
