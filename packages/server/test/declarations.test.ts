import { operations } from '@convene/contract';
import { describe, expect, it } from 'vitest';
import { declarations, neverReplayed, tools } from '../src/api';

/** The contract operations the declarations serve, by operationId, as often as they are declared. */
function declaredOperationIds(): string[] {
  return declarations.flatMap((declaration) => {
    if (declaration.kind === 'operation') return [declaration.contract.operationId];
    if (declaration.kind === 'route')
      return Object.values(declaration.methods).flatMap((method) =>
        method?.contract ? [method.contract.operationId] : [],
      );
    return [];
  });
}

describe('the operation declarations', () => {
  it('declare every operation of the contract exactly once', () => {
    const declared = declaredOperationIds();
    expect([...declared].sort()).toEqual(Object.keys(operations).sort());
    expect(new Set(declared).size).toBe(declared.length);
  });

  it('declare each route path and method once', () => {
    const seen = declarations.flatMap((declaration) =>
      declaration.kind === 'route'
        ? Object.keys(declaration.methods).map((method) => `${method} ${declaration.path}`)
        : declaration.kind === 'operation'
          ? [`${declaration.contract.method} ${declaration.contract.path}`]
          : [],
    );
    expect(seen.length).toBeGreaterThan(Object.keys(operations).length);
    expect(seen.filter((entry, i) => seen.indexOf(entry) !== i)).toEqual([]);
  });

  it('name every MCP tool once', () => {
    const names = tools.map((tool) => tool.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toContain('send_message');
  });

  it('never replay the writes the contract marks so', () => {
    const expected = Object.values(operations)
      .filter((contract) => !contract.replayable && contract.method !== 'GET')
      .map((contract) => `${contract.method} ${contract.path}`);
    expect([...neverReplayed].sort()).toEqual(expected.sort());
    expect(neverReplayed).toContain('POST /hub/space');
    expect(neverReplayed).toContain('POST /hub/link/start');
  });
});
