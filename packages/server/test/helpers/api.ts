import { errorCodes, type TKnownErrorCode } from '@convene/contract';
import { expect } from 'vitest';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  key?: string | undefined;
  body?: unknown;
  headers?: Record<string, string>;
  /** Send the body as-is (a string, or bytes), without JSON encoding. */
  raw?: boolean;
}

/** A thin HTTP client for tests: every call is real HTTP against a running server. */
export class Api {
  readonly #baseUrl: string | (() => string);

  /** `baseUrl` may be a function: a fixture's client exists before its server listens. */
  constructor(baseUrl: string | (() => string)) {
    this.#baseUrl = baseUrl;
  }

  get baseUrl(): string {
    return typeof this.#baseUrl === 'string' ? this.#baseUrl : this.#baseUrl();
  }

  async request<T = any>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.key !== undefined) headers['X-Private-Key'] = options.key;
    let body: string | Uint8Array | undefined;
    if (options.body !== undefined) {
      body = options.raw
        ? options.body instanceof Uint8Array
          ? options.body
          : String(options.body)
        : JSON.stringify(options.body);
      headers['Content-Type'] ??= 'application/json';
    }
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers,
      ...(body !== undefined ? { body } : {}),
    });
    const text = await response.text();
    let parsed: unknown = text;
    if ((response.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
    return { status: response.status, headers: response.headers, body: parsed as T, text };
  }

  get = <T = any>(path: string, options?: RequestOptions) => this.request<T>('GET', path, options);
  post = <T = any>(path: string, options?: RequestOptions) => this.request<T>('POST', path, options);
  put = <T = any>(path: string, options?: RequestOptions) => this.request<T>('PUT', path, options);
  patch = <T = any>(path: string, options?: RequestOptions) => this.request<T>('PATCH', path, options);
  delete = <T = any>(path: string, options?: RequestOptions) => this.request<T>('DELETE', path, options);
}

/**
 * A JSON error of `status`: a message, and a code the contract lists for that status (`code`
 * when given: the specific one expected).
 */
export function expectError(response: ApiResponse, status: number, code?: TKnownErrorCode): void {
  expect(response.status, response.text).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/application\/json/);
  expect(typeof response.body.error).toBe('string');
  expect(response.body.error.length).toBeGreaterThan(0);
  if (code) expect(response.body.code, response.text).toBe(code);
  const known = errorCodes[response.body.code as TKnownErrorCode];
  expect(known?.status as readonly number[] | undefined, `code of ${response.text}`).toContain(status);
  expect(response.headers.get('api-version')).toBe('1');
  if (status === 401) {
    expect(response.headers.get('www-authenticate')).toMatch(
      /^Bearer resource_metadata="http[^"]+\/\.well-known\/oauth-protected-resource"$/,
    );
  }
}

export function expectOk(response: ApiResponse, status = 200): void {
  expect(response.status, response.text).toBe(status);
  expect(response.headers.get('api-version')).toBe('1');
}
