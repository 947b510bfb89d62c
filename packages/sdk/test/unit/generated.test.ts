import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { format, generatedPath, renderGenerated } from '../../scripts/generate';

describe('src/generated.ts', () => {
  it('is what the contract generates today (run `pnpm --filter @convene/sdk generate` if not)', () => {
    expect(readFileSync(generatedPath, 'utf8')).toBe(format(renderGenerated()));
  });
});
