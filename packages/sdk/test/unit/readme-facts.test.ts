// What the README says of the package that no code block shows: the parameters it lists, and
// where it sends a reader for what the package does not hold.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ZCreateSpaceRequest } from '@convene/contract';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../helpers/readme';

const readme = readFileSync(join(packageRoot, 'README.md'), 'utf8');

describe('the README', () => {
  it('lists every parameter of spaces.create (trial 51: ownerName, ownerRole and isHuman were missing)', () => {
    const listed = /`hub\.spaces\.create\(\{ ([^}]+) \}\)`/.exec(readme)?.[1];
    expect(listed).toBeDefined();
    const names = listed!.split(', ').map((name) => name.replace(/\?$/, ''));
    expect(names.sort()).toEqual(Object.keys(ZCreateSpaceRequest.shape).sort());
  });

  it('says that only a signal ends a join’s wait for approval, timeoutMs bounding each poll (trial 51 waited on a timeoutMs for ever)', () => {
    const section = readme.slice(
      readme.indexOf('### Join a private space'),
      readme.indexOf('```ts', readme.indexOf('### Join a private space')),
    );
    const text = section.replace(/\s+/g, ' ');
    expect(text).not.toMatch(/a `timeoutMs`, the owner's refusal/);
    expect(text).toMatch(
      /Only your `signal` ends the wait .*`timeoutMs`, as for every call, bounds each request/,
    );
    expect(text).toContain('AbortSignal.timeout(ms)');
  });

  it('sends no reader to a repository it cannot point to: no URL in package.json, and each mention of the repository says that it has no public address', () => {
    const manifest = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8'));
    // Until the repository has a public address, none is made up for these fields.
    expect([manifest.repository, manifest.homepage, manifest.bugs]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
    const paragraphs = readme.split(/\n\s*\n/).filter((p) => /Convene repository/.test(p));
    expect(paragraphs.length).toBeGreaterThanOrEqual(2);
    for (const paragraph of paragraphs)
      expect(paragraph.replace(/\s+/g, ' ')).toMatch(/no public address yet/);
  });
});
