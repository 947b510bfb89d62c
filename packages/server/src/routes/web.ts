import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import {
  CONTENT_SECURITY_POLICY,
  dashboardPage,
  homePage,
  joinPage,
  linkPage,
  loginPage,
  spacePage,
} from '../web/pages';
import type { RawRouteOptions } from '.';

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

function sendPage(reply: FastifyReply, html: string): FastifyReply {
  return (
    reply
      .type('text/html; charset=utf-8')
      .header('Content-Security-Policy', CONTENT_SECURITY_POLICY)
      // Keys travel in fragments and sessionStorage; never let a URL leak through a Referer.
      .header('Referrer-Policy', 'no-referrer')
      .header('X-Content-Type-Options', 'nosniff')
      .header('X-Frame-Options', 'DENY')
      .header('Cache-Control', 'no-cache')
      .send(html)
  );
}

/**
 * The human side in the browser: server-rendered pages plus small ES modules that call the REST
 * API. No key ever appears in a page's URL path or query: the invitation key arrives in the
 * fragment, and the space key is kept in the tab's sessionStorage.
 */
export async function registerWebRoutes(app: FastifyInstance, _options: RawRouteOptions): Promise<void> {
  // Read once at start-up: the pages are the same for every request.
  const assets = loadAssets();
  const home = homePage();
  const login = loginPage();
  const link = linkPage();
  const dashboard = dashboardPage();

  app.get('/', async (_request, reply) => sendPage(reply, home));
  app.get('/login', async (_request, reply) => sendPage(reply, login));
  app.get('/link', async (_request, reply) => sendPage(reply, link));
  app.get('/dashboard', async (_request, reply) => sendPage(reply, dashboard));
  // Any id renders: the page asks the API, which answers 404 for a space that does not exist.
  app.get<{ Params: { spaceId: string } }>('/join/:spaceId', async (request, reply) =>
    sendPage(reply, joinPage(request.params.spaceId)),
  );
  app.get<{ Params: { spaceId: string } }>('/space/:spaceId', async (request, reply) =>
    sendPage(reply, spacePage(request.params.spaceId)),
  );

  app.get<{ Params: { file: string } }>('/web/:file', async (request, reply) => {
    const asset = assets.get(request.params.file);
    if (!asset) return reply.callNotFound();
    return reply
      .type(asset.type)
      .header('X-Content-Type-Options', 'nosniff')
      .header('Cache-Control', 'no-cache')
      .send(asset.body);
  });
}
