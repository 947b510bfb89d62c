import { type Deps, getSpace } from '@convene/core';
import type { RouteHandlerMethod } from 'fastify';
import { sendRaw } from '../http/reply';
import { headerValue } from '../rest/caller';
import type { RouteScope } from '../routes/scope';
import { A2A_PROTOCOL_VERSION } from './protocol';

interface CardOptions {
  name: string;
  description: string;
  url: string;
  publicUrl: string;
}

/** An A2A agent card (protocol 0.3): the JSON-RPC endpoint, its skills, and the key it takes. */
export function agentCard({ name, description, url, publicUrl }: CardOptions) {
  return {
    protocolVersion: A2A_PROTOCOL_VERSION,
    name,
    description,
    url,
    preferredTransport: 'JSONRPC',
    version: '1.0.0',
    provider: { organization: 'Convene', url: publicUrl },
    documentationUrl: `${publicUrl}/agent-guide.md`,
    capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain', 'application/json'],
    securitySchemes: {
      spaceKey: {
        type: 'apiKey',
        in: 'header',
        name: 'X-Private-Key',
        description:
          'A key of the space: a participant or owner key to talk, an invitation key to join. Create a space (POST /hub/space) for an owner key.',
      },
    },
    security: [{ spaceKey: [] }],
    skills: [
      {
        id: 'converse',
        name: 'Talk in the space',
        description:
          'message/send posts your text parts as a message to everyone in the space (a data part {mentions, replyTo} addresses it). Its task is working until someone answers, then completed with the answer; configuration.blocking waits for it. message/stream streams what the others say until someone answers.',
        tags: ['chat', 'meeting', 'collaboration'],
        examples: ['What is left on the agenda?', 'Please review the plan.'],
        inputModes: ['text/plain', 'application/json'],
        outputModes: ['text/plain', 'application/json'],
      },
      {
        id: 'join',
        name: 'Join the space',
        description:
          'With an invitation key: message/send with a data part {name, role?, isHuman?} joins. A public space answers a completed task whose artifact holds your participant key; a private one a submitted task that completes when the owner approves (tasks/get or message/stream).',
        tags: ['join', 'onboarding'],
        examples: ['{"name": "Research agent", "role": "finds sources"}'],
        inputModes: ['application/json'],
        outputModes: ['application/json'],
      },
    ],
  };
}

/** GET /.well-known/agent-card.json: the service's card; the key of a request says the space. */
export function serviceCardHandler({ config }: RouteScope): RouteHandlerMethod {
  const body = agentCard({
    name: 'Convene',
    description:
      'A neutral meeting place where agents and humans meet in shared spaces, talk and co-edit markdown documents. Every space is an A2A context: your space key says which.',
    url: `${config.publicUrl}/a2a`,
    publicUrl: config.publicUrl,
  });
  return async (_request, reply) =>
    sendRaw(reply, { type: 'application/json; charset=utf-8', body, cache: 'public' });
}

/** GET /hub/space/{spaceId}/agent-card.json: one space's card, for any key of it (header or `?key=`). */
export function spaceCardHandler({ config, deps }: RouteScope): RouteHandlerMethod {
  return async (request, reply) => {
    const { spaceId } = request.params as { spaceId: string };
    const query = request.query as { key?: unknown };
    const key =
      headerValue(request, 'x-private-key') || (typeof query.key === 'string' ? query.key : undefined);
    const space = await getSpace({ deps: deps as Deps, spaceId, key });
    const body = agentCard({
      name: space.name,
      description: space.description + (space.agenda ? `\n\nAgenda: ${space.agenda}` : ''),
      url: `${config.publicUrl}/hub/space/${space.spaceId}/a2a`,
      publicUrl: config.publicUrl,
    });
    return sendRaw(reply, { type: 'application/json; charset=utf-8', body, cache: 'no-store' });
  };
}
