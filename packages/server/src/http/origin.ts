/**
 * The Origin check of the JSON-RPC endpoints a browser page must not reach from another site
 * (/mcp, /a2a): a page of another origin, DNS rebinding included (a page whose host name now points
 * at this server; its Origin gives it away), is refused with 403. Requests without Origin (every
 * non-browser client) pass.
 */
export function foreignOrigin(
  headers: Record<string, string | string[] | undefined>,
  allowedOrigin: string,
): { status: 403; error: string } | null {
  const origin = headers.origin;
  if (origin !== undefined && !sameOrigin(String(origin), allowedOrigin))
    return { status: 403, error: `requests from origin ${String(origin)} are not allowed here` };
  return null;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Whether a request's Origin is the service's own: PUBLIC_URL's origin, or, when PUBLIC_URL names
 * a loopback host, the same scheme and port under another loopback name (`localhost`, `127.0.0.1`,
 * `[::1]` all reach this server; a rebinding page's origin carries its own domain name).
 */
function sameOrigin(origin: string, allowedOrigin: string): boolean {
  // Never throws: an Origin that is no URL, or an opaque one (`null`, sent by sandboxed frames and
  // file: pages), is another origin; and so is every Origin when our own is opaque (a PUBLIC_URL
  // without http(s)://, which the configuration now refuses, made the comparison below throw: 500).
  if (!URL.canParse(origin) || !URL.canParse(allowedOrigin)) return false;
  const given = new URL(origin);
  const own = new URL(allowedOrigin);
  if (given.origin === 'null' || own.origin === 'null') return false;
  if (origin === allowedOrigin) return true;
  return (
    LOOPBACK.has(own.hostname) &&
    LOOPBACK.has(given.hostname) &&
    given.protocol === own.protocol &&
    given.port === own.port
  );
}
