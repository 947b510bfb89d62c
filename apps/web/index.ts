/**
 * `@convene/web` as the server sees it: where the build output is, how to read it, and how a
 * space's page gets its id. Nothing else of the package (its browser code, the SDK) is loaded by
 * the server.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PAGE_NAMES, type PageName } from './src/shell/html';

export {
  type HeadLink,
  PAGE_NAMES,
  type PageName,
  withHeadLinks,
  withSpaceId,
} from './src/shell/html';

/**
 * The build output (`pnpm --filter @convene/web build`): `pages/<name>.html`, the shells, and
 * `assets/`, the scripts, the stylesheet and the icon the server serves at `/web/`.
 */
export const webDistDir: string = fileURLToPath(new URL('./dist/', import.meta.url));

export interface WebAsset {
  body: Buffer;
  contentType: string;
  /** Named after its content (`chunk-<hash>.js`): it never changes, so a browser may keep it. */
  immutable: boolean;
  /**
   * Its content's fingerprint (assetVersion): the shells name the other files as
   * `/web/<name>?v=<version>`, a URL a browser may keep as long as a chunk's.
   */
  version: string;
}

/** A file's content version: 16 base64url characters of its SHA-256 (96 bits). */
export const assetVersion = (body: Buffer): string =>
  createHash('sha256').update(body).digest('base64url').slice(0, 16);

export interface WebBuild {
  /** Each page's shell. */
  pages: Record<PageName, string>;
  /** The files served at `/web/<name>`, by name: nothing else may be asked for. */
  assets: Map<string, WebAsset>;
}

const CONTENT_TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
};

/** Reads a build (by default this package's dist/) into memory; undefined when there is none. */
export function readWebBuild(dir: string = webDistDir): WebBuild | undefined {
  const shell = (page: PageName) => join(dir, 'pages', `${page}.html`);
  const assetsDir = join(dir, 'assets');
  if (!PAGE_NAMES.every((page) => existsSync(shell(page))) || !existsSync(assetsDir)) return undefined;
  const pages = Object.fromEntries(PAGE_NAMES.map((page) => [page, readFileSync(shell(page), 'utf8')]));
  const assets = new Map<string, WebAsset>();
  for (const name of readdirSync(assetsDir)) {
    const contentType = CONTENT_TYPES[name.slice(name.lastIndexOf('.') + 1)];
    if (contentType) {
      const body = readFileSync(join(assetsDir, name));
      assets.set(name, {
        body,
        contentType,
        immutable: name.startsWith('chunk-'),
        version: assetVersion(body),
      });
    }
  }
  return { pages: pages as Record<PageName, string>, assets };
}
