import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type ApiResponse, expectError, expectOk, useServer } from './helpers';

const { srv, h } = useServer();

/** A word no document contains: letters only, so stemming treats the space and the query alike. */
const uniqueWord = () => `zq${[...randomBytes(8)].map((b) => String.fromCharCode(97 + (b % 26))).join('')}`;

const askGet = (query: string, headers: Record<string, string> = {}) =>
  h.get(`/ask?query=${encodeURIComponent(query)}`, { headers });

interface Result {
  url: string;
  name: string;
  site?: string;
  score: number;
  description: string;
  schema_object?: Record<string, any>;
}

function expectAnswer(res: ApiResponse, query: string): Result[] {
  expectOk(res);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.body._meta).toEqual({ response_type: 'list', version: '1' });
  expect(res.body.query_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  expect(res.body.query).toBe(query);
  const results = res.body.results as Result[];
  for (const result of results) {
    expect(result.url.startsWith(`${srv.url}/`)).toBe(true);
    expect(new URL(result.url).href).toBe(result.url);
    expect(result.site).toBe(srv.url);
    expect(typeof result.score).toBe('number');
    expect(result.name.length).toBeGreaterThan(0);
    expect(result.schema_object?.['@context']).toBe('https://schema.org');
  }
  const scores = results.map((r) => r.score);
  expect(scores).toEqual([...scores].sort((a, b) => b - a));
  return results;
}

/** Parses a complete SSE body into its events. */
function parseEvents(text: string): { event: string; data: any }[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim())
    .map((block) => {
      const event = block.match(/^event: (.+)$/m)?.[1] ?? 'message';
      const data = block.match(/^data: (.+)$/m)?.[1];
      return { event, data: data ? JSON.parse(data) : undefined };
    });
}

describe('/ask over spaces', () => {
  it('finds a public open space by a word of its description, with only what is public', async () => {
    const word = uniqueWord();
    const space = await h.createSpace({
      name: 'Garden club',
      description: `We talk about ${word} and roses`,
      agenda: '1. Pruning',
      ownerName: 'Secret Sam',
    });
    await h.joinActive(space, { name: 'Hidden Helen' });
    const results = expectAnswer(await askGet(word), word);
    expect(results).toHaveLength(1);
    const [hit] = results;
    expect(hit).toMatchObject({ url: `${srv.url}/hub/space/${space.spaceId}`, name: 'Garden club' });
    expect(hit?.description).toContain(`We talk about ${word} and roses`);
    expect(hit?.description).toContain('1. Pruning');
    expect(hit?.description).toContain('2 participants');
    expect(hit?.schema_object).toMatchObject({
      '@type': 'Event',
      identifier: space.spaceId,
      name: 'Garden club',
      description: `We talk about ${word} and roses`,
      about: '1. Pruning',
      remainingAttendeeCapacity: 998,
    });
    // Name, description, agenda, participant count; never who is in it, nor any key.
    const text = JSON.stringify(hit);
    expect(text).not.toContain('Secret Sam');
    expect(text).not.toContain('Hidden Helen');
    expect(text).not.toContain(space.ownerKey);
  });

  it('finds a space by a word of its name or agenda, by POST too', async () => {
    const inName = uniqueWord();
    const inAgenda = uniqueWord();
    const space = await h.createSpace({
      name: `The ${inName} summit`,
      description: 'd',
      agenda: `Discuss ${inAgenda}`,
    });
    const byName = expectAnswer(await h.post('/ask', { body: { query: inName } }), inName);
    expect(byName.map((r) => r.url)).toEqual([`${srv.url}/hub/space/${space.spaceId}`]);
    const byAgenda = expectAnswer(
      await h.post('/ask', { body: { query: `what about ${inAgenda}?` } }),
      `what about ${inAgenda}?`,
    );
    expect(byAgenda.map((r) => r.url)).toEqual([`${srv.url}/hub/space/${space.spaceId}`]);
  });

  it('never finds a private, closed or expired space', async () => {
    const word = uniqueWord();
    const visible = await h.createSpace({ description: `public ${word}` });
    await h.createSpace({ description: `private ${word}`, privacy: 'private' });
    const closed = await h.createSpace({ description: `closed ${word}` });
    expectOk(await h.delete(`/hub/space/${closed.spaceId}`, { key: closed.ownerKey }));
    await h.createSpace({ description: `expiring ${word}`, ttl: 1 });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const results = expectAnswer(await askGet(word), word);
    expect(results.map((r) => r.url)).toEqual([`${srv.url}/hub/space/${visible.spaceId}`]);
  });

  it('ranks a space matching every word above one matching some', async () => {
    const a = uniqueWord();
    const b = uniqueWord();
    const some = await h.createSpace({ description: `only ${a}` });
    const every = await h.createSpace({ description: `both ${a} and ${b}` });
    const results = expectAnswer(await askGet(`${a} ${b}`), `${a} ${b}`);
    expect(results.map((r) => r.url)).toEqual([
      `${srv.url}/hub/space/${every.spaceId}`,
      `${srv.url}/hub/space/${some.spaceId}`,
    ]);
  });
});

describe('/ask over the documentation', () => {
  it('finds the lock operation for "lock an artifact"', async () => {
    const results = expectAnswer(await askGet('lock an artifact'), 'lock an artifact');
    const lock = results.find((r) => r.schema_object?.identifier === 'lockArtifact');
    expect(lock, JSON.stringify(results.map((r) => r.name))).toBeDefined();
    expect(results.indexOf(lock!)).toBeLessThan(3);
    // A JSON Pointer in a URI fragment is percent-encoded (RFC 6901 section 6): braces may not stand in a URI.
    expect(lock?.url).toBe(
      `${srv.url}/openapi.json#/paths/~1hub~1space~1%7BspaceId%7D~1artifact~1%7BartifactId%7D~1lock/post`,
    );
    expect(URL.canParse(lock!.url)).toBe(true);
    expect(lock!.url).not.toMatch(/[{}]/);
    expect(lock?.description).toContain('MCP tool: lock_artifact');
    expect(lock?.schema_object).toMatchObject({
      '@type': 'WebAPI',
      documentation: `${srv.url}/openapi.json`,
      potentialAction: {
        target: {
          urlTemplate: `${srv.url}/hub/space/{spaceId}/artifact/{artifactId}/lock`,
          httpMethod: 'POST',
        },
      },
    });
    // The agent guide's section on locks is a TechArticle pointing at its heading.
    const guide = results.find((r) => r.schema_object?.['@type'] === 'TechArticle');
    expect(guide?.url).toBe(`${srv.url}/agent-guide.md#5-co-edit-artifacts-under-a-lock`);
    expect(guide?.schema_object).toMatchObject({
      isPartOf: { url: `${srv.url}/agent-guide.md` },
      articleSection: '5. Co-edit artifacts under a lock',
    });
  });

  it('finds the auth guide and the MCP endpoint', async () => {
    const link = expectAnswer(
      await askGet('link a human with the browser flow'),
      'link a human with the browser flow',
    );
    expect(link.some((r) => r.url.startsWith(`${srv.url}/auth.md#`))).toBe(true);
    const mcp = expectAnswer(await askGet('model context protocol tools'), 'model context protocol tools');
    expect(mcp.some((r) => r.schema_object?.identifier === 'mcp')).toBe(true);
  });

  it('answers an empty list for words found nowhere, or only stop words', async () => {
    const nowhere = uniqueWord();
    expect(expectAnswer(await askGet(nowhere), nowhere)).toEqual([]);
    expect(expectAnswer(await askGet('the of and'), 'the of and')).toEqual([]);
  });
});

describe('/ask validation', () => {
  it.each([
    ['GET without query', () => h.get('/ask')],
    ['GET with an empty query', () => h.get('/ask?query=')],
    ['GET with a blank query', () => h.get('/ask?query=%20%20')],
    ['POST without query', () => h.post('/ask', { body: {} })],
    ['POST with an empty query', () => h.post('/ask', { body: { query: '' } })],
    ['POST with a non-string query', () => h.post('/ask', { body: { query: 42 } })],
    ['POST with a bad prefer', () => h.post('/ask', { body: { query: 'x', prefer: { streaming: 'yes' } } })],
  ])('%s answers 400 JSON', async (_label, send) => {
    const res = await send();
    expectError(res, 400);
  });

  it('answers 400 JSON for an empty query even when a stream is asked for', async () => {
    const res = await h.post('/ask', { body: { query: '', prefer: { streaming: true } } });
    expectError(res, 400);
  });
});

describe('/ask streaming', () => {
  async function expectStream(res: ApiResponse, query: string) {
    expectOk(res);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = parseEvents(res.text);
    const names = events.map((e) => e.event);
    expect(names[0]).toBe('start');
    expect(names.at(-1)).toBe('complete');
    expect(names.slice(1, -1).every((n) => n === 'result')).toBe(true);
    const [start] = events;
    const complete = events.at(-1)!;
    expect(start?.data).toMatchObject({ query });
    expect(start?.data.query_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(complete.data).toEqual({ query_id: start?.data.query_id, count: events.length - 2 });
    return events.slice(1, -1).map((e) => e.data as Result);
  }

  it('streams start, one result per item, complete with prefer.streaming', async () => {
    const word = uniqueWord();
    const first = await h.createSpace({ description: `first ${word}` });
    const second = await h.createSpace({ description: `second ${word}` });
    const results = await expectStream(
      await h.post('/ask', { body: { query: word, prefer: { streaming: true } } }),
      word,
    );
    expect(results.map((r) => r.url).sort()).toEqual(
      [`${srv.url}/hub/space/${first.spaceId}`, `${srv.url}/hub/space/${second.spaceId}`].sort(),
    );
    expect(results[0]?.schema_object?.['@type']).toBe('Event');
  });

  it('streams with Accept: text/event-stream, on GET too', async () => {
    const results = await expectStream(
      await askGet('lock an artifact', { Accept: 'text/event-stream' }),
      'lock an artifact',
    );
    expect(results.length).toBeGreaterThan(1);
    expect(results.some((r) => r.schema_object?.identifier === 'lockArtifact')).toBe(true);
  });

  it('answers JSON when streaming is not asked for', async () => {
    const res = await h.post('/ask', { body: { query: 'join', prefer: { streaming: false } } });
    expectAnswer(res, 'join');
  });
});
