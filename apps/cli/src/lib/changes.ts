import { routes } from '@convene/sdk';

/** The calls other than GETs that change nothing the user would look for: a question, a poll, a health check. */
const NOT_CHANGES = new Set(['ask', 'pollLink', 'login', 'health']);

/** Each call that changes something, by its method and the end of its path (the base URL may have a prefix). */
const CHANGES = Object.entries(routes)
  .filter(([operation, route]) => route.method !== 'GET' && !NOT_CHANGES.has(operation))
  .map(([operation, route]) => ({
    operation,
    method: route.method,
    path: new RegExp(`${route.path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }));

/** The operation of the API (`closeSpace`) a request is, when it is one that changes something. */
export function changeOf(method: string, url: string): string | undefined {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return undefined;
  }
  return CHANGES.find((change) => change.method === method.toUpperCase() && change.path.test(path))
    ?.operation;
}

/** The codes of a connection refused before the request went out (the SDK's own list). */
const NEVER_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

/** Whether a fetch failed before its request went out, by the system's code under it. */
const neverSent = (error: unknown): boolean => {
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause;
  return typeof cause?.code === 'string' && NEVER_SENT.has(cause.code);
};

/**
 * The changes a run has sent that the server may have made without the run knowing: out, or cut
 * off without an answer (which the SDK may be about to send again), until an attempt of the same
 * request is answered. What a signal that ends the run then says (`interruptedChange`): that it
 * may have been done, where the run used to end silently.
 */
export class Changes {
  private readonly unsettled = new Map<string, string>();
  /** The requests an attempt of which went out, or may have (answered, or failed otherwise than refused). */
  private readonly sent = new Set<string>();

  /** `fetch`, noting the changes it sends until they are answered. */
  watch(fetch: typeof globalThis.fetch): typeof globalThis.fetch {
    return async (input, init) => {
      const method = init?.method ?? 'GET';
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      const operation = changeOf(method, url);
      if (operation === undefined) return fetch(input, init);
      const request = `${method} ${url}`;
      this.unsettled.set(request, operation);
      let response: Response;
      try {
        response = await fetch(input, init);
      } catch (error) {
        // Refused before it was sent (nothing listens, the name does not resolve): unless an
        // earlier attempt of it went out, nothing was done. Any other failure may follow a request
        // the server took.
        if (!neverSent(error)) this.sent.add(request);
        else if (!this.sent.has(request)) this.unsettled.delete(request);
        throw error;
      }
      this.sent.add(request);
      // A 5xx may have run partway: the SDK sends it again, or fails saying so.
      if (response.status < 500) this.unsettled.delete(request);
      return response;
    };
  }

  /** The operation of the last change sent whose outcome is not known, if any. */
  last(): string | undefined {
    return [...this.unsettled.values()].at(-1);
  }
}
