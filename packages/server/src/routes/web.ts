import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyReply, RouteHandlerMethod } from 'fastify';
import { MEDIA, sendRaw } from '../http/reply';
import { CONTENT_SECURITY_POLICY } from '../web/pages';
import type { RouteScope } from './scope';

const ASSETS = new URL('../web/assets/', import.meta.url);

/** DOMPurify's ES module build, from the installed package (no bundler, no copy in the repo). */
function dompurifyModule(): string {
  const main = createRequire(import.meta.url).resolve('dompurify');
  return readFileSync(join(dirname(main), 'purify.es.mjs'), 'utf8').replace(
    /\n\/\/# sourceMappingURL=.*\s*$/,
    '\n',
  );
}

const TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
};

/** The pages' files: their names are fixed here, so a request can never name another file. */
const ASSET_FILES = [
  'style.css',
  'icon.svg',
  'api.js',
  'ui.js',
  'home.js',
  'join.js',
  'space.js',
  'login.js',
  'link.js',
  'dashboard.js',
];

function loadAssets(): Map<string, { body: string; type: string }> {
  const assets = new Map<string, { body: string; type: string }>();
  for (const name of ASSET_FILES) {
    const extension = name.slice(name.lastIndexOf('.') + 1);
    assets.set(name, {
      body: readFileSync(new URL(name, ASSETS), 'utf8'),
      type: TYPES[extension] ?? 'application/octet-stream',
    });
  }
  assets.set('purify.js', { body: dompurifyModule(), type: TYPES.js! });
  return assets;
}

const PAGE_HEADERS = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  // Keys travel in fragments and sessionStorage; never let a URL leak through a Referer.
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

const sendPage = (reply: FastifyReply, html: string): FastifyReply =>
  sendRaw(reply, { type: MEDIA.html, body: html, cache: 'no-cache', nosniff: true, headers: PAGE_HEADERS });

// The human side in the browser: server-rendered pages plus small ES modules that call the REST
// API. No key ever appears in a page's URL path or query: the invitation key arrives in the
// fragment, and the space key is kept in the tab's sessionStorage.

/** A page that is the same for every request: rendered once, when the route table is built. */
export const staticPage =
  (render: () => string) =>
  (_scope: RouteScope): RouteHandlerMethod => {
    const html = render();
    return async (_request, reply) => sendPage(reply, html);
  };

/** A page of one space. Any id renders: the page asks the API, which answers 404 for a space that does not exist. */
export const spacePageOf =
  (render: (spaceId: string) => string) =>
  (_scope: RouteScope): RouteHandlerMethod =>
  async (request, reply) =>
    sendPage(reply, render((request.params as { spaceId: string }).spaceId));

/** The pages' scripts, styles and icon, read once. */
export function assetHandler(_scope: RouteScope): RouteHandlerMethod {
  const assets = loadAssets();
  return async (request, reply) => {
    const asset = assets.get((request.params as { file: string }).file);
    if (!asset) return reply.callNotFound();
    return sendRaw(reply, { type: asset.type, body: asset.body, cache: 'no-cache', nosniff: true });
  };
}
