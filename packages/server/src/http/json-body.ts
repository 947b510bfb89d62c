import type { IncomingMessage } from 'node:http';

declare global {
  interface String {
    /** ES2024, in Node since 20: false when the string holds a lone surrogate. */
    isWellFormed(): boolean;
  }
}

/** Deepest nesting of arrays and objects a request body may have (decisions.md). */
export const MAX_JSON_DEPTH = 64;

/** The answer to U+0000 in a text field, wherever it is found. */
export const NUL_PROBLEM = 'text fields cannot contain U+0000';

/**
 * The answer to a lone surrogate (`"\ud800"`, valid JSON but no Unicode text): stored, it would
 * become U+FFFD, and what was sent would be lost without a word.
 */
export const SURROGATE_PROBLEM = 'text fields must be well-formed Unicode (a lone surrogate is not)';

/**
 * What is wrong with a parsed JSON body, or null: nesting deeper than MAX_JSON_DEPTH (the layers
 * below recurse and would overflow the stack), or U+0000 (PostgreSQL text cannot hold it) or a lone
 * surrogate in any string or member name outside `nulCheckedLater` (values whose handler answers
 * those itself, as a tool's arguments on /mcp). Walks the value without recursion, so a hostile body cannot
 * overflow the stack here either.
 */
export function jsonBodyProblem(value: unknown, nulCheckedLater?: ReadonlySet<unknown>): string | null {
  const stack: { value: unknown; depth: number; nul: boolean }[] = [{ value, depth: 0, nul: true }];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const { value: node, depth } = item;
    const nul = item.nul && !nulCheckedLater?.has(node);
    if (typeof node === 'string') {
      if (nul && node.includes('\u0000')) return NUL_PROBLEM;
      if (nul && !node.isWellFormed()) return SURROGATE_PROBLEM;
      continue;
    }
    if (node === null || typeof node !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH) return `request body is nested deeper than ${MAX_JSON_DEPTH} levels`;
    if (Array.isArray(node)) {
      for (const child of node) stack.push({ value: child, depth: depth + 1, nul });
      continue;
    }
    for (const [name, child] of Object.entries(node)) {
      if (nul && name.includes('\u0000')) return NUL_PROBLEM;
      if (nul && !name.isWellFormed()) return SURROGATE_PROBLEM;
      stack.push({ value: child, depth: depth + 1, nul });
    }
  }
  return null;
}

/** A JSON object, as every operation with a body expects (arrays, numbers, strings, null are not). */
export const isJsonObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** `%00` anywhere in the URL: U+0000 in a path segment or a query value. */
export const urlHasNul = (url: string): boolean => /%00/i.test(url);

/** How much of a refused body is read and thrown away so that its client can read the answer. */
const DRAIN_LIMIT_BYTES = 16 * 1024 * 1024;
const DRAIN_TIMEOUT_MS = 10_000;

/**
 * Reads and discards what is left of a request body, so that an answer sent before the client has
 * finished sending (a body over the limit) is read by the client instead of ending in a reset
 * connection. Bounded in bytes and time: a client that sends more than that is cut off.
 */
export function drainRequest(req: IncomingMessage): Promise<void> {
  if (req.readableEnded || req.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    let received = 0;
    const done = () => {
      clearTimeout(timer);
      req.removeListener('data', onData);
      req.removeListener('end', done);
      req.removeListener('close', done);
      req.removeListener('error', done);
      resolve();
    };
    const onData = (chunk: Buffer | string) => {
      received += chunk.length;
      if (received > DRAIN_LIMIT_BYTES) done();
    };
    const timer = setTimeout(done, DRAIN_TIMEOUT_MS);
    timer.unref();
    req.on('data', onData);
    req.once('end', done);
    req.once('close', done);
    req.once('error', done);
    req.resume();
  });
}
