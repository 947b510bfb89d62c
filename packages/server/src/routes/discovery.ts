import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isUuid, NotFoundError } from '@convene/core';
import type { RouteHandlerMethod } from 'fastify';
import { MEDIA, sendRaw } from '../http/reply';
import type { RouteScope } from './scope';

/** The auth guide's source; `{PUBLIC_URL}` stands for the service's address wherever it appears. */
export const AUTH_GUIDE_FILE = new URL('../../content/auth.md', import.meta.url);

/** The auth guide with every `{PUBLIC_URL}` made absolute (also what /ask should index). */
export function renderAuthGuide(publicUrl: string): string {
  return readFileSync(AUTH_GUIDE_FILE, 'utf8').replaceAll('{PUBLIC_URL}', publicUrl);
}

/** RFC 9728 protected-resource metadata: where a client that got a 401 learns how to authenticate. */
export function protectedResourceMetadata(publicUrl: string) {
  return {
    resource: publicUrl,
    resource_name: 'Convene',
    resource_documentation: `${publicUrl}/auth.md`,
    authorization_servers: [publicUrl],
    bearer_methods_supported: ['header'],
    // Space keys are not OAuth bearer tokens: they travel in their own header.
    credential_header: 'X-Private-Key',
    credential_types_supported: ['api_key'],
  };
}

/** RFC 8414 authorization-server metadata with the agent_auth registration profile. */
export function authorizationServerMetadata(publicUrl: string) {
  return {
    issuer: publicUrl,
    service_documentation: `${publicUrl}/auth.md`,
    // Public keys of the dashboard JWTs (EdDSA).
    jwks_uri: `${publicUrl}/.well-known/jwks.json`,
    // No OAuth authorization or token endpoint: credentials come from the agent_auth flows below.
    response_types_supported: [],
    grant_types_supported: [],
    agent_auth: {
      skill: `${publicUrl}/auth.md`,
      // Registering is createSpace, which mints the owner key.
      register_uri: `${publicUrl}/hub/space`,
      identity_types_supported: ['anonymous', 'identity_assertion'],
      anonymous: { credential_types_supported: ['api_key'], credential_header: 'X-Private-Key' },
      identity_assertion: {
        // OAuth identity-assertion JWTs (ID-JAG) are not accepted.
        assertion_types_supported: [],
        device_authorization_uri: `${publicUrl}/hub/link/start`,
        token_uri: `${publicUrl}/hub/link/poll`,
        verification_uri: `${publicUrl}/link`,
        credential_types_supported: ['api_key'],
        credential_header: 'X-User-Token',
      },
    },
  };
}

/**
 * A 5×5 mirrored identicon drawn from the SHA-256 of the participant id: the same id always
 * gives the same picture, and the picture says nothing about the participant but its id.
 */
export function identiconSvg(participantId: string): string {
  const digest = createHash('sha256').update(participantId.toLowerCase()).digest();
  const hue = Math.round((digest.readUInt16BE(0) / 0xffff) * 360);
  const saturation = 45 + ((digest[2] ?? 0) % 30);
  const lightness = 40 + ((digest[3] ?? 0) % 20);
  const cells: string[] = [];
  for (let row = 0; row < 5; row++) {
    for (let col = 0; col < 3; col++) {
      // One bit per cell of the left three columns; the right two mirror them.
      const bit = row * 3 + col;
      if ((((digest[4 + (bit >> 3)] ?? 0) >> (bit & 7)) & 1) === 0) continue;
      for (const x of new Set([col, 4 - col])) {
        cells.push(`<rect x="${x * 10 + 5}" y="${row * 10 + 5}" width="10" height="10"/>`);
      }
    }
  }
  return [
    '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 60 60" role="img">',
    `<title>avatar ${participantId.toLowerCase()}</title>`,
    '<rect width="60" height="60" fill="#f2f2f2"/>',
    `<g fill="hsl(${hue} ${saturation}% ${lightness}%)">${cells.join('')}</g>`,
    '</svg>',
  ].join('');
}

/**
 * Discovery documents (RFC 9728 and RFC 8414 with the agent_auth profile), the auth guide and
 * the avatars. All public; the documents are rendered once, when the route table is built.
 */
export function protectedResourceHandler({ config }: RouteScope): RouteHandlerMethod {
  const resource = JSON.stringify(protectedResourceMetadata(config.publicUrl));
  return async (_request, reply) => sendRaw(reply, { type: MEDIA.json, body: resource, cache: 'public' });
}

export function authorizationServerHandler({ config }: RouteScope): RouteHandlerMethod {
  const server = JSON.stringify(authorizationServerMetadata(config.publicUrl));
  return async (_request, reply) => sendRaw(reply, { type: MEDIA.json, body: server, cache: 'public' });
}

export function authGuideHandler({ config }: RouteScope): RouteHandlerMethod {
  const guide = renderAuthGuide(config.publicUrl);
  return async (_request, reply) => sendRaw(reply, { type: MEDIA.markdown, body: guide, cache: 'public' });
}

export function avatarHandler(_scope: RouteScope): RouteHandlerMethod {
  return async (request, reply) => {
    const match = /^(.+)\.svg$/.exec((request.params as { file: string }).file);
    const participantId = match?.[1];
    if (!participantId || !isUuid(participantId)) throw new NotFoundError('avatar');
    return sendRaw(reply, {
      type: MEDIA.svg,
      body: identiconSvg(participantId),
      cache: 'immutable',
      nosniff: true,
    });
  };
}
