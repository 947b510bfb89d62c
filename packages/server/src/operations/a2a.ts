import { serviceCardHandler, spaceCardHandler } from '../a2a/card';
import { a2aHandler } from '../a2a/handler';
import { type Declaration, route } from './declare';

const json = { 'application/json': { schema: { type: 'object', additionalProperties: true } } };
const errorJson = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };
const spaceIdParam = {
  name: 'spaceId',
  in: 'path',
  required: true,
  schema: { type: 'string', format: 'uuid' },
};

const rpc = (operationId: string, summary: string, parameters: unknown[] = []) => ({
  operationId,
  tags: ['a2a'],
  summary,
  description:
    'Agent2Agent (A2A 0.3) JSON-RPC 2.0: `message/send` (a participant or owner key posts into the space; its task is working until someone answers; an invitation key joins, the task completing with the participant key once admitted), `message/stream` (the same, then the task’s progress as Server-Sent Events, each a JSON-RPC response), `tasks/get`, `tasks/resubscribe`; `tasks/cancel` is refused (-32002). Refusals are JSON-RPC errors whose `data` carries the REST status and error; a missing or dead key is HTTP 401.',
  security: [{ spaceKey: [] }],
  parameters,
  requestBody: {
    required: true,
    content: {
      'application/json': {
        schema: {
          type: 'object',
          required: ['jsonrpc', 'method'],
          properties: {
            jsonrpc: { type: 'string', enum: ['2.0'] },
            id: { type: ['string', 'number', 'null'] },
            method: {
              type: 'string',
              description:
                'message/send, message/stream, tasks/get, tasks/resubscribe, tasks/cancel; any other is a JSON-RPC error',
            },
            params: { type: 'object' },
          },
        },
      },
    },
  },
  responses: {
    '200': {
      description:
        'A JSON-RPC response (a Task, or an error); for message/stream and tasks/resubscribe an event stream',
      content: { ...json, 'text/event-stream': { schema: { type: 'string' } } },
    },
    '400': { description: 'Not a JSON-RPC 2.0 request', content: errorJson },
    '401': { description: 'Key missing or dead; carries WWW-Authenticate', content: errorJson },
    ...(parameters.length ? { '404': { description: 'No such space', content: errorJson } } : {}),
    '429': { description: 'Rate limit exceeded; carries Retry-After', content: errorJson },
  },
});

const card = (operationId: string, summary: string, parameters: unknown[] = [], errors = {}) => ({
  operationId,
  tags: ['a2a'],
  summary,
  security: parameters.length ? [{ spaceKey: [] }] : [],
  parameters,
  responses: { '200': { description: 'An A2A agent card (protocol 0.3)', content: json }, ...errors },
});

/** Agent2Agent: agent cards and the JSON-RPC endpoint (src/a2a). */
export const a2aOperations: Declaration[] = [
  route('/.well-known/agent-card.json', {
    GET: card(
      'getServiceAgentCard',
      'The service’s A2A agent card: its endpoint is /a2a, where the key says the space',
    ),
    handler: serviceCardHandler,
  }),
  route('/hub/space/{spaceId}/agent-card.json', {
    GET: card(
      'getSpaceAgentCard',
      'A space’s A2A agent card (any key of the space, as X-Private-Key or ?key=): its endpoint is the space’s /a2a',
      [
        spaceIdParam,
        {
          name: 'key',
          in: 'query',
          required: false,
          description: 'A key of the space',
          schema: { type: 'string' },
        },
      ],
      {
        '401': { description: 'Key missing, unknown or dead', content: errorJson },
        '404': { description: 'No such space', content: errorJson },
      },
    ),
    handler: spaceCardHandler,
    reads: ['spaceKey'],
  }),
  route('/a2a', {
    POST: rpc('a2a', 'A2A JSON-RPC: the space is the one the key belongs to'),
    handler: a2aHandler,
    // A blocking message/send waits for the answer.
    longWait: true,
    reads: ['spaceKey'],
  }),
  route('/hub/space/{spaceId}/a2a', {
    POST: rpc('spaceA2a', 'A2A JSON-RPC for one space', [spaceIdParam]),
    handler: a2aHandler,
    longWait: true,
    reads: ['spaceKey'],
  }),
];
