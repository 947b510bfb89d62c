import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { format, generatedPath, renderGenerated } from '../../scripts/generate';
import { LinkDeniedError } from '../../src';

describe('src/generated.ts', () => {
  it('is what the contract generates today (run `pnpm --filter @convene/sdk generate` if not)', () => {
    expect(readFileSync(generatedPath, 'utf8')).toBe(format(renderGenerated()));
  });

  it('lists in KnownErrorCode every code the SDK gives its own errors, link_denied too (the contract’s clientErrorCodes)', () => {
    const generated = readFileSync(generatedPath, 'utf8');
    const union = /export type KnownErrorCode =([^;]+);/.exec(generated)?.[1] ?? '';
    const known = new Set([...union.matchAll(/'(\w+)'/g)].map((match) => match[1]));
    // The codes the SDK's source sets without an answer's body: `setField(error, 'code', 'x')`, a
    // made-up body `{ error, code: 'x' }`, a class's `code = 'x'`.
    const src = join(generatedPath, '..');
    const own = new Set<string>();
    for (const file of readdirSync(src).filter((name) => name.endsWith('.ts') && name !== 'generated.ts'))
      for (const [, code] of readFileSync(join(src, file), 'utf8').matchAll(
        /(?:'code', |\bcode: |\bcode = )'(\w+)'/g,
      ))
        own.add(code!);
    expect([...own].sort()).toEqual(['link_denied', 'lock_held', 'lock_not_held']);
    expect([...own].filter((code) => !known.has(code))).toEqual([]);
    expect(known.has(new LinkDeniedError('refused').code)).toBe(true);
  });
});
