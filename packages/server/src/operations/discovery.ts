import {
  authGuideHandler,
  authorizationServerHandler,
  avatarHandler,
  protectedResourceHandler,
} from '../routes/discovery';
import { jwksHandler } from '../routes/identity';
import { type Declaration, route } from './declare';

const json = { 'application/json': { schema: { type: 'object', additionalProperties: true } } };
const errorJson = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };

/** Where a client learns how to authenticate (RFC 9728, RFC 8414 with agent_auth), and avatars. */
export const discoveryOperations: Declaration[] = [
  route('/.well-known/oauth-protected-resource', {
    GET: {
      operationId: 'getProtectedResourceMetadata',
      tags: ['discovery'],
      summary: 'Protected-resource metadata (RFC 9728): where the WWW-Authenticate header of a 401 points',
      security: [],
      responses: { '200': { description: 'Protected-resource metadata', content: json } },
    },
    handler: protectedResourceHandler,
  }),
  route('/.well-known/oauth-authorization-server', {
    GET: {
      operationId: 'getAuthorizationServerMetadata',
      tags: ['discovery'],
      summary: 'Authorization-server metadata (RFC 8414) with the agent_auth block',
      security: [],
      responses: { '200': { description: 'Authorization-server metadata', content: json } },
    },
    handler: authorizationServerHandler,
  }),
  route('/.well-known/jwks.json', {
    GET: {
      operationId: 'getJwks',
      tags: ['account'],
      summary: 'Public keys (JWKS) that verify dashboard JWTs (EdDSA)',
      security: [],
      responses: {
        200: {
          description: 'A JSON Web Key Set',
          content: {
            'application/jwk-set+json': {
              schema: {
                type: 'object',
                required: ['keys'],
                properties: { keys: { type: 'array', items: { type: 'object' } } },
              },
            },
          },
        },
      },
    },
    handler: jwksHandler,
  }),
  route('/auth.md', {
    GET: {
      operationId: 'getAuthGuide',
      tags: ['discovery'],
      summary: 'The authentication guide for agents, as markdown',
      security: [],
      responses: {
        '200': { description: 'The guide', content: { 'text/markdown': { schema: { type: 'string' } } } },
      },
    },
    handler: authGuideHandler,
  }),
  route('/avatar/{participantId}.svg', {
    url: '/avatar/:file',
    GET: {
      operationId: 'getAvatar',
      tags: ['discovery'],
      summary: "A participant's identicon, drawn from its id (public)",
      description: 'Drawn from the id alone, which is not looked up: any UUID has one.',
      security: [],
      parameters: [
        { name: 'participantId', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } },
      ],
      responses: {
        '200': { description: 'SVG image', content: { 'image/svg+xml': { schema: { type: 'string' } } } },
        '404': { description: 'Not a UUID followed by `.svg`', content: errorJson },
        '429': { description: 'Rate limit exceeded; carries Retry-After', content: errorJson },
      },
    },
    handler: avatarHandler,
    // An <img> of every participant on each page view: counted with the pages, not the API.
    page: true,
  }),
];
