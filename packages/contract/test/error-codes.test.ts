import { describe, expect, it } from 'vitest';
import {
  clientErrorCodes,
  errorCodes,
  genericErrorCodes,
  ZClientKnownErrorCode,
  ZKnownErrorCode,
} from '../src/error-codes';

const entries = Object.entries(errorCodes);

describe('the generic codes', () => {
  it('are one per status, each written once in the table', () => {
    const generic = entries.filter(([, entry]) => 'generic' in entry);
    expect(Object.keys(genericErrorCodes)).toHaveLength(generic.length);
    for (const [code, { status }] of generic) expect(genericErrorCodes[status[0]]).toBe(code);
  });

  it('cover every status a specific code answers: an unknown code falls back to one', () => {
    for (const [code, { status }] of entries)
      for (const one of status) expect(genericErrorCodes[one], `${code} (${one})`).toBeDefined();
  });

  it('keep the names they were published with', () => {
    expect(genericErrorCodes).toEqual({
      400: 'invalid_request',
      401: 'unauthorized',
      403: 'forbidden',
      404: 'not_found',
      406: 'not_acceptable',
      409: 'conflict',
      410: 'gone',
      413: 'payload_too_large',
      422: 'idempotency_mismatch',
      423: 'locked',
      429: 'rate_limited',
      500: 'internal_error',
      503: 'unavailable',
    });
  });
});

describe('the codes a client says of itself', () => {
  it('are none of the service’s, which answers none of them; a client’s list holds both', () => {
    for (const code of Object.keys(clientErrorCodes)) expect(errorCodes).not.toHaveProperty(code);
    expect(ZKnownErrorCode.options).not.toContain('link_denied');
    expect(ZClientKnownErrorCode.options).toEqual([
      ...Object.keys(errorCodes),
      ...Object.keys(clientErrorCodes),
    ]);
  });
});
