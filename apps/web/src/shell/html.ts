// What the shells and the server that serves them agree on. No imports: the server loads this
// (through the package's index.ts) without the pages' browser code or the SDK.

/** Escapes text for an HTML text node or a double-quoted attribute. */
export function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

/**
 * Where a space's page (join, space) carries its space id, empty in the built shell. Any id
 * renders: the page asks the API, which answers 404 for a space that does not exist.
 */
export const SPACE_ID_SLOT = 'data-space-id=""';

/** A space page's shell with the space id of its URL path written in, escaped. */
export function withSpaceId(shell: string, spaceId: string): string {
  // A function, not a string: `$&` and the like in the id must stay text, not replacement patterns.
  return shell.replace(SPACE_ID_SLOT, () => `data-space-id="${escapeHtml(spaceId)}"`);
}

/** A `<link>` the server adds to a page's head: a document about the service (RFC 8288 relations). */
export interface HeadLink {
  rel: string;
  href: string;
  type: string;
}

/** A shell with `<link>` elements added at the end of its head, escaped. */
export function withHeadLinks(shell: string, links: readonly HeadLink[]): string {
  const tags = links
    .map(
      ({ rel, href, type }) =>
        `<link rel="${escapeHtml(rel)}" href="${escapeHtml(href)}" type="${escapeHtml(type)}">\n`,
    )
    .join('');
  return shell.replace('</head>', () => `${tags}</head>`);
}

/**
 * A shell whose references to the build's files (`"/web/<name>"`) carry each file's content
 * version (`"/web/<name>?v=<version>"`), for the files `versions` names: a URL that changes with
 * the bytes, which the server lets a browser keep for a year without asking again. A page of a new
 * build names new URLs, so no browser keeps an old script past a release.
 */
export function withAssetVersions(shell: string, versions: ReadonlyMap<string, string>): string {
  return shell.replace(/"\/web\/([^"?]+)"/g, (whole, name: string) => {
    const version = versions.get(name);
    return version ? `"/web/${name}?v=${version}"` : whole;
  });
}

/** The pages, by the name of their shell (`dist/pages/<name>.html`) and script (`/web/<name>.js`). */
export const PAGE_NAMES = ['home', 'join', 'space', 'login', 'link', 'dashboard'] as const;
export type PageName = (typeof PAGE_NAMES)[number];
