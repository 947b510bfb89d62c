import { isUuid } from '@convene/core';
import {
  type HeadLink,
  type PageName,
  readWebBuild,
  type WebBuild,
  withHeadLinks,
  withSpaceId,
} from '@convene/web';
import type { FastifyReply, RouteHandlerMethod } from 'fastify';
import { MEDIA, sendError, sendRaw } from '../http/reply';
import type { RouteScope } from './scope';

// The human side in the browser: the shells and scripts of @convene/web's build (config.webDir),
// served as they are. No key ever appears in a page's URL path or query: the invitation key
// arrives in the fragment, and the space key is kept in the tab's sessionStorage.

/** Scripts only from this origin, no inline code or style, no framing, no plugins. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  // Avatars are ours; image messages are https: URLs or data:image URIs (checked in the page too).
  "img-src 'self' https: data:",
  "connect-src 'self'",
  "font-src 'self'",
  "manifest-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

interface Served {
  build: WebBuild | undefined;
}

/** The build, read once per server (its route scope), when its first web route is built. */
const served = new WeakMap<RouteScope, Served>();

function servedBy(scope: RouteScope): Served {
  let read = served.get(scope);
  if (!read) {
    const build = readWebBuild(scope.config.webDir);
    if (!build)
      scope.app.log.warn(
        `the web pages are not built (nothing in ${scope.config.webDir}): run \`pnpm build\`; until then they answer 503`,
      );
    read = { build };
    served.set(scope, read);
  }
  return read;
}

const notBuilt = (reply: FastifyReply) =>
  sendError(reply, 503, { error: 'the web pages are not built on this server: run `pnpm build`' });

const PAGE_HEADERS = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  // Keys travel in fragments and sessionStorage; never let a URL leak through a Referer.
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

const sendPage = (reply: FastifyReply, html: string): FastifyReply =>
  sendRaw(reply, { type: MEDIA.html, body: html, cache: 'no-cache', nosniff: true, headers: PAGE_HEADERS });

/** A page that is the same for every request. */
export const staticPage =
  (name: PageName) =>
  (scope: RouteScope): RouteHandlerMethod => {
    const { build } = servedBy(scope);
    return async (_request, reply) => (build ? sendPage(reply, build.pages[name]) : notBuilt(reply));
  };

/**
 * What `/` points an agent at, since it answers HTML whatever the request accepts: llms.txt, which
 * lists the guides, the API and MCP, and the OpenAPI document (RFC 8631 `service-desc`). Absolute
 * URLs from PUBLIC_URL, as in every document the service hands out.
 */
export const discoveryLinks = (publicUrl: string): HeadLink[] => [
  { rel: 'describedby', href: `${publicUrl}/llms.txt`, type: 'text/plain' },
  { rel: 'service-desc', href: `${publicUrl}/openapi.json`, type: 'application/json' },
];

/** Links as an HTTP `Link` header (RFC 8288). */
export const linkHeader = (links: readonly HeadLink[]): string =>
  links.map(({ rel, href, type }) => `<${href}>; rel="${rel}"; type="${type}"`).join(', ');

/** `/`: the home page, with the discovery links in its head and in a `Link` header. */
export function homePage(scope: RouteScope): RouteHandlerMethod {
  const { build } = servedBy(scope);
  const links = discoveryLinks(scope.config.publicUrl);
  const html = build && withHeadLinks(build.pages.home, links);
  const link = linkHeader(links);
  return async (_request, reply) => {
    // Even without a build of the pages, an agent learns where to go.
    reply.header('Link', link);
    return html ? sendPage(reply, html) : notBuilt(reply);
  };
}

/**
 * Whether `next` is a path on this server, as a browser reads it: it starts with one `/`, holds
 * no control character, space or backslash (browsers drop tabs and newlines anywhere in a URL and
 * read `\` as `/`, so `/\t/evil.example` and `/\evil.example` are both `//evil.example`), and
 * resolves on this origin.
 */
export function isSameSitePath(next: string, origin: string): boolean {
  if (!next.startsWith('/') || next.startsWith('//')) return false;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for.
  if (/[\u0000-\u0020\u007f\\]/.test(next)) return false;
  return URL.canParse(next, origin) && new URL(next, origin).origin === origin;
}

/**
 * `/login?next=`: where the page goes once the human is logged in. decisions.md: only a path on
 * this server. Any other `next` (another site in any spelling, or several) is dropped by a
 * redirect to the bare /login before the page runs, so the page's script never sees it.
 */
export function loginPage(scope: RouteScope): RouteHandlerMethod {
  const { build } = servedBy(scope);
  const origin = new URL(scope.config.publicUrl).origin;
  return async (request, reply) => {
    const next = (request.query as Record<string, unknown>).next;
    if (next === undefined || (typeof next === 'string' && isSameSitePath(next, origin)))
      return build ? sendPage(reply, build.pages.login) : notBuilt(reply);
    reply.code(303);
    return sendRaw(reply, {
      type: MEDIA.text,
      body: 'See /login\n',
      cache: 'no-store',
      headers: { Location: `${scope.config.publicUrl}/login` },
    });
  };
}

/**
 * A page of one space. Any UUID renders: the page asks the API, which answers 404 for a space that
 * does not exist, and the page tells the human so in words. Any other id names nothing
 * (decisions.md): 404, JSON as every 4xx (the specification: never HTML), in words a human reads.
 */
export const spacePageOf =
  (name: 'join' | 'space') =>
  (scope: RouteScope): RouteHandlerMethod => {
    const { build } = servedBy(scope);
    return async (request, reply) => {
      if (!build) return notBuilt(reply);
      const { spaceId } = request.params as { spaceId: string };
      if (!isUuid(spaceId))
        return sendError(reply, 404, {
          error:
            'No space has this address. Check the link you were given: a space’s address ends with its id.',
          code: 'not_found',
        });
      return sendPage(reply, withSpaceId(build.pages[name], spaceId));
    };
  };

/**
 * The pages' scripts, styles and icon: only the files the build produced can be named. A URL that
 * names the bytes it gets (a chunk, named after its content; another file with its content
 * version, `?v=`, as the shells name them) is kept by the browser for a year without asking again;
 * any other (the bare name, or the version of another build, as a page of another release asks a
 * node during a rolling upgrade) is revalidated, so a browser never keeps bytes under a URL that
 * names others.
 */
export function assetHandler(scope: RouteScope): RouteHandlerMethod {
  const { build } = servedBy(scope);
  return async (request, reply) => {
    if (!build) return notBuilt(reply);
    const file = (request.params as { file: string }).file;
    const asset = build.assets.get(file);
    if (!asset) return reply.callNotFound();
    // A strong validator of the bytes: a browser that has them already gets an empty 304.
    const etag = `"${asset.version}"`;
    const fresh = request.headers['if-none-match'] === etag;
    if (fresh) reply.code(304);
    const named = asset.immutable || (request.query as { v?: unknown }).v === asset.version;
    return sendRaw(reply, {
      type: asset.contentType,
      body: fresh ? '' : asset.body,
      cache: named ? 'immutable' : 'no-cache',
      nosniff: true,
      headers: { ETag: etag },
    });
  };
}
