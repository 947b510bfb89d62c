import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AskDocument, ask, indexAskDocuments, withoutStrayNots } from '../src/ask';
import { FakeClock } from '../src/clock';
import { rowsOf } from '../src/db';
import { type Deps, defaultCoreConfig } from '../src/deps';
import { Sealer } from '../src/infra/sealer';
import { SecretBox } from '../src/secrets';
import { createSpace } from '../src/spaces';
import { openTestDatabase, type TestDatabase } from '../src/testing';

let t: TestDatabase;
let deps: Deps;
const clock = new FakeClock('2030-01-01T00:00:00.000Z');
const config = { ...defaultCoreConfig, publicUrl: 'https://convene.example' };

beforeAll(async () => {
  t = await openTestDatabase();
  // Only what these use cases read; ask needs db, clock and config, createSpace the box too.
  deps = {
    db: t.database.db,
    clock,
    box: new Sealer(new SecretBox('ask-test-secret-0123456789')),
    config,
  } as unknown as Deps;
});
afterAll(() => t?.close());

const doc = (id: string, name: string, body: string, extra: Partial<AskDocument> = {}): AskDocument => ({
  id,
  kind: 'guide',
  path: `/guide.md#${id}`,
  name,
  description: name,
  body,
  data: { guide: 'guide.md', guideTitle: 'Guide', section: name },
  ...extra,
});

const storedIds = async () =>
  rowsOf<{ id: string }>(await t.database.db.execute(sql`select id from ask_documents order by id`)).map(
    (r) => r.id,
  );

describe('indexAskDocuments', () => {
  it('makes the stored documentation exactly the given set', async () => {
    await indexAskDocuments({
      db: deps.db,
      documents: [doc('a', 'Alpha', 'first pelican'), doc('b', 'Beta', 'second walrus')],
    });
    expect(await storedIds()).toEqual(['a', 'b']);
    expect((await ask({ deps, query: 'pelican' })).results.map((r) => r.name)).toEqual(['Alpha']);

    // b changes, a goes away, c arrives.
    await indexAskDocuments({
      db: deps.db,
      documents: [doc('b', 'Beta', 'now about pelican'), doc('c', 'Gamma', 'third narwhal')],
    });
    expect(await storedIds()).toEqual(['b', 'c']);
    expect((await ask({ deps, query: 'pelican' })).results.map((r) => r.name)).toEqual(['Beta']);
    expect((await ask({ deps, query: 'walrus' })).results).toEqual([]);
  });

  it('lets several nodes index at once', async () => {
    const documents = [doc('x', 'Xi', 'concurrent ocelot'), doc('y', 'Ypsilon', 'concurrent lynx')];
    await Promise.all([
      indexAskDocuments({ db: deps.db, documents }),
      indexAskDocuments({ db: deps.db, documents }),
      indexAskDocuments({ db: deps.db, documents }),
    ]);
    expect(await storedIds()).toEqual(['x', 'y']);
  });
});

describe('ask', () => {
  it('ranks a document with every word above one with some, and the name above the body', async () => {
    await indexAskDocuments({
      db: deps.db,
      documents: [
        doc('some', 'Unrelated', 'mentions the heron only'),
        doc('every', 'Also unrelated', 'the heron and the egret'),
        doc('named', 'Heron', 'nothing else'),
      ],
    });
    const answer = await ask({ deps, query: 'heron egret' });
    expect(answer.results.map((r) => r.url)).toEqual([
      'https://convene.example/guide.md#every',
      'https://convene.example/guide.md#named',
      'https://convene.example/guide.md#some',
    ]);
    const named = (await ask({ deps, query: 'heron' })).results;
    expect(named[0]?.url).toBe('https://convene.example/guide.md#named');
  });

  it('finds public open spaces by their text and never private or expired ones', async () => {
    const visible = await createSpace({
      deps,
      input: { name: 'Marmot meetup', description: 'all about marmots', privacy: 'public', ttl: 3600 },
    });
    await createSpace({
      deps,
      input: { name: 'Marmot secrets', description: 'private marmots', privacy: 'private', ttl: 3600 },
    });
    const shortLived = await createSpace({
      deps,
      input: { name: 'Marmot flash', description: 'brief marmots', privacy: 'public', ttl: 60 },
    });
    const before = (await ask({ deps, query: 'marmot' })).results.map((r) => r.url).sort();
    expect(before).toEqual(
      [
        `https://convene.example/hub/space/${visible.spaceId}`,
        `https://convene.example/hub/space/${shortLived.spaceId}`,
      ].sort(),
    );
    // The TTL is read from the injected clock.
    clock.advance(61_000);
    const after = (await ask({ deps, query: 'marmot' })).results.map((r) => r.url);
    expect(after).toEqual([`https://convene.example/hub/space/${visible.spaceId}`]);
  });

  it('answers nothing for stop words or punctuation, and survives query syntax', async () => {
    expect((await ask({ deps, query: 'the and of' })).results).toEqual([]);
    expect((await ask({ deps, query: '!!! ??? ---' })).results).toEqual([]);
    for (const query of ["it's", 'a & b | c', '"unterminated', "back\\slash 'quote'", '(marmot) -meetup OR'])
      await expect(ask({ deps, query })).resolves.toMatchObject({ query });
  });

  it('takes any run of dashes: only a dash before a word or a phrase is a NOT', async () => {
    // PostgreSQL stacks a NOT for every other dash, and failed past 32 (a 500 for `/ask?query=---…`).
    const runs = ['-'.repeat(33), '- '.repeat(40), `marmot ${'-'.repeat(100)}`];
    for (const mark of '!&()<|:*\\'.split('')) runs.push(`-${mark}`.repeat(40), `-${mark} `.repeat(40));
    for (const query of runs) await expect(ask({ deps, query })).resolves.toMatchObject({ query });
    // A NOT before a word or a phrase is one still, whatever marks stand between.
    expect(withoutStrayNots('marmot -meetup -"dry run" -é -2 -@bob -#release -(draft) - -- x-')).toBe(
      'marmot -meetup -"dry run" -é -2 -@bob -#release -(draft)      x ',
    );
    const space = (name: string) =>
      createSpace({ deps, input: { name, description: '', privacy: 'public', ttl: 3600 } });
    const withBob = await space('Zqdeploy with bob');
    const without = await space('Zqdeploy alone');
    const urls = async (query: string) => (await ask({ deps, query })).results.map((r) => r.url);
    const url = (s: { spaceId: string }) => `https://convene.example/hub/space/${s.spaceId}`;
    // The one without bob matches the whole query, so ranks first; then the other, which shares a word.
    expect(await urls('zqdeploy -@bob')).toEqual([url(without), url(withBob)]);
    expect(await urls('zqdeploy @bob')).toEqual([url(withBob), url(without)]);
  });

  it('matches a long query on its first 32 distinct words, every one still counting for the full match', async () => {
    const filler = Array.from({ length: 32 }, (_, i) => `zqfiller${i}`).join(' ');
    const space = await createSpace({
      deps,
      input: { name: 'Capybara council', description: 'capybaras only', privacy: 'public', ttl: 3600 },
    });
    const url = `https://convene.example/hub/space/${space.spaceId}`;
    // The 33rd distinct word does not match alone...
    expect((await ask({ deps, query: `${filler} capybara` })).results.map((r) => r.url)).not.toContain(url);
    // ...the first ones do, and a space with all of the query's words ranks above one with some.
    const [first] = (await ask({ deps, query: 'capybara council' })).results;
    expect(first?.url).toBe(url);
  });

  it('ranks the newest 1,000 matching spaces, so an answer costs the same however many match', async () => {
    await createSpace({
      deps,
      input: { name: 'Axolotl axolotl', description: 'axolotl', privacy: 'public', ttl: 3600 },
    });
    expect((await ask({ deps, query: 'axolotl' })).results[0]?.name).toBe('Axolotl axolotl');
    clock.advance(1_000);
    // 1,000 weaker matches, all newer: the agenda alone names the word.
    await deps.db.execute(sql`
      insert into spaces (id, name, description, agenda, privacy, ttl_seconds, created_at, expires_at)
      select gen_random_uuid(), 'Pond ' || g, 'water', 'an axolotl', 'public', 3600,
             ${clock.now().toISOString()}::timestamptz, ${clock.now().toISOString()}::timestamptz + interval '1 hour'
      from generate_series(1, 1000) g`);
    const names = (await ask({ deps, query: 'axolotl' })).results.map((r) => r.name);
    expect(names).toHaveLength(10);
    expect(names.every((name) => name.startsWith('Pond '))).toBe(true);
    expect(names).not.toContain('Axolotl axolotl');
  });

  it('answers in the NLWeb shape with a fresh query id each time', async () => {
    const first = await ask({ deps, query: 'marmot' });
    const second = await ask({ deps, query: 'marmot' });
    expect(first._meta).toEqual({ response_type: 'list', version: '1' });
    expect(first.query_id).not.toBe(second.query_id);
    expect(first.results[0]).toMatchObject({
      site: 'https://convene.example',
      schema_object: { '@type': 'Event' },
    });
  });
});
