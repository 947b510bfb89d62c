import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createArtifact,
  diffArtifactVersions,
  InlineDiffEngine,
  lockArtifact,
  writeArtifact,
} from '../src/artifacts';
import { FakeClock } from '../src/clock';
import { type Deps, defaultCoreConfig } from '../src/deps';
import { createNotifyBus } from '../src/events/event-bus';
import { Sealer } from '../src/infra/sealer';
import { SecretBox } from '../src/secrets';
import { createSpace } from '../src/spaces';
import { openTestDatabase, type TestDatabase } from '../src/testing';

let t: TestDatabase;
let deps: Deps;

beforeAll(async () => {
  t = await openTestDatabase();
  // Only what these use cases read: no sessions, no watch.
  deps = {
    db: t.database.db,
    clock: new FakeClock(),
    box: new Sealer(new SecretBox('diff-test-secret-0123456789')),
    diffs: new InlineDiffEngine(),
    events: createNotifyBus(t.database),
    config: defaultCoreConfig,
  } as unknown as Deps;
});
afterAll(() => t?.close());

/** The two file headers of a diff of an artifact called `name`, from its first version to a second. */
async function headersOf(name: string): Promise<string[]> {
  const { spaceId, ownerPrivateKey: key } = await createSpace({
    deps,
    input: { name: 'Diffs', description: '', privacy: 'public', ttl: 3600 },
  });
  const artifact = await createArtifact({
    deps,
    spaceId,
    key,
    input: { name, type: 'markdown', content: 'a\n' },
  });
  await lockArtifact({ deps, spaceId, artifactId: artifact.id, key });
  await writeArtifact({ deps, spaceId, artifactId: artifact.id, key, input: { content: 'b\n' } });
  const diff = await diffArtifactVersions({
    deps,
    spaceId,
    artifactId: artifact.id,
    from: '1',
    to: '2',
    key,
  });
  return diff.split('\n').slice(0, 2);
}

describe('diffArtifactVersions', () => {
  it('names the artifact as a markdown file in its headers, adding .md only when the name lacks it', async () => {
    expect(await headersOf('Plan')).toEqual(['--- Plan.md\tversion 1', '+++ Plan.md\tversion 2']);
    expect(await headersOf('plan.md')).toEqual(['--- plan.md\tversion 1', '+++ plan.md\tversion 2']);
    expect(await headersOf('NOTES.Md')).toEqual(['--- NOTES.Md\tversion 1', '+++ NOTES.Md\tversion 2']);
    // Only the extension counts, not the letters.
    expect(await headersOf('readme-md')).toEqual([
      '--- readme-md.md\tversion 1',
      '+++ readme-md.md\tversion 2',
    ]);
  });
});
