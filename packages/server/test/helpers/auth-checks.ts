import { expect } from 'vitest';
import { type Api, expectError, type RequestOptions } from './api';

export interface AuthCheck {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  body?: unknown;
  /** Keys of other types that must be refused with 401 (wrong type for the action). */
  wrongKeys?: Record<string, string>;
}

/**
 * The shared security checks of every protected operation: a missing key, an unknown key and
 * each wrong-type key answer 401 with the WWW-Authenticate discovery header.
 */
export async function expectKeyChecks(api: Api, check: AuthCheck): Promise<void> {
  const send = (options: RequestOptions) =>
    api.request(check.method, check.path, {
      ...(check.body !== undefined ? { body: check.body } : {}),
      ...options,
    });

  expectError(await send({}), 401);
  expectError(await send({ key: 'f'.repeat(64) }), 401);
  expectError(await send({ key: 'not-a-key' }), 401);
  for (const [label, key] of Object.entries(check.wrongKeys ?? {})) {
    const res = await send({ key });
    expect(res.status, `${label} key on ${check.method} ${check.path}: ${res.text}`).toBe(401);
    expectError(res, 401);
  }
}
