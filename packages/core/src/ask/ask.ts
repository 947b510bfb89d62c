import type { TAskResult, TAskResultItem } from '@convene/contract';
import { limits } from '@convene/contract';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../db/migrate';
import type { Deps } from '../deps';
import { newId } from '../ids';

export interface AskOptions {
  deps: Pick<Deps, 'db' | 'clock' | 'config'>;
  /** The natural-language query, already validated as non-empty. */
  query: string;
  /** How many results at most (default 10). */
  limit?: number | undefined;
}

/** `_meta` of every answer: a ranked list, in version 1 of this answer's shape. */
export const askMeta = { response_type: 'list', version: '1' } as const;

/** A full match of every term ranks above a match of only some of them. */
const ALL_TERMS_BONUS = 0.5;

/**
 * A long query matches on its first 32 distinct words (all of them still count for the full-match
 * bonus), and only the 1,000 newest matching spaces are ranked: the cost of an answer stays
 * bounded however long the query and however many public spaces match it (on the embedded
 * database a query holds the event loop: 11,000 matching spaces and a 1,000-character query took
 * a second of it).
 */
const MAX_TERMS = 32;
const MAX_RANKED_SPACES = 1000;

interface DocumentRow {
  id: string;
  kind: 'operation' | 'guide';
  path: string;
  name: string;
  description: string;
  data: Record<string, unknown>;
  score: number;
}

interface SpaceRow {
  id: string;
  name: string;
  description: string;
  agenda: string;
  participant_count: number;
  score: number;
}

/**
 * Natural-language search over the service's own documentation and its public, open spaces,
 * ranked by PostgreSQL full-text search. A document matches when it contains any of the query's
 * words (stemmed, stop words dropped) and ranks higher when it contains all of them. Of a space
 * only its name, description, agenda and participant count are ever read or returned.
 */
export async function ask({ deps, query, limit = 10 }: AskOptions): Promise<TAskResult> {
  const { db, clock, config } = deps;
  const bonus = sql.raw(`${ALL_TERMS_BONUS}::float8`);
  const terms = sql`(
    select websearch_to_tsquery('english', ${withoutStrayNots(query)}) as all_terms,
           to_tsquery('simple', coalesce((
             select string_agg('''' || replace(replace(lexeme, '\\', '\\\\'), '''', '''''') || '''', ' | ')
             from (select lexeme from unnest(to_tsvector('english', ${query}))
                   order by positions[1] limit ${MAX_TERMS}) first_terms
           ), '')) as any_terms
  ) q`;

  const documents = rowsOf<DocumentRow>(
    await db.execute(sql`
      select d.id, d.kind, d.path, d.name, d.description, d.data,
             (ts_rank(d.search, q.any_terms)
               + case when d.search @@ q.all_terms then ${bonus} else 0 end)::float8 as score
      from ask_documents d, ${terms}
      where d.search @@ q.any_terms
      order by score desc, d.id
      limit ${limit}`),
  );

  // Only public spaces that are open and not past their TTL; never private, closed or expired.
  // Their search vectors are stored and indexed (public and open only), so a query reads only the
  // spaces that match; it ranks the newest of them, and reads the text and counts participants
  // only for the few it answers with.
  const spaces = rowsOf<SpaceRow>(
    await db.execute(sql`
      with matching as (
        select s.id, s.search
        from spaces s, ${terms}
        where s.privacy = 'public' and s.state = 'open' and s.expires_at > ${clock.now().toISOString()}
          and s.search @@ q.any_terms
        order by s.created_at desc, s.id
        limit ${MAX_RANKED_SPACES}
      ), ranked as (
        select m.id,
               (ts_rank(m.search, q.any_terms)
                 + case when m.search @@ q.all_terms then ${bonus} else 0 end)::float8 as score
        from matching m, ${terms}
        order by score desc, m.id
        limit ${limit}
      )
      select r.id, s.name, s.description, s.agenda, r.score,
             (select count(*) from participants p
               where p.space_id = r.id and p.status in ('active', 'muted'))::int as participant_count
      from ranked r join spaces s on s.id = r.id
      order by r.score desc, r.id`),
  );

  const site = config.publicUrl;
  const results = [
    ...documents.map((row) => ({ score: row.score, item: documentItem(row, site) })),
    ...spaces.map((row) => ({ score: row.score, item: spaceItem(row, site) })),
  ]
    .sort((a, b) => b.score - a.score)
    .slice(0, limit)
    .map(({ item }) => item);

  return { _meta: { ...askMeta }, query_id: newId(), query, results };
}

/**
 * The query as websearch_to_tsquery may take it: a `-` is a NOT of the word it stands before
 * (`-meetup`, `-"dry run"`, `-@bob`, `-(draft)`), but PostgreSQL stacks every other one (a run of
 * dashes, a dash before a space or another dash) as a NOT waiting for its operand, and fails past
 * 32 ("tsquery stack too small": `---…` or `- - -…` or `-(-(…` answered 500). Those are spaces;
 * so is a dash standing alone between words (`foo - bar` is foo and bar, as search engines read it).
 */
export const withoutStrayNots = (query: string): string =>
  query.replace(/-(?=[^\s\p{L}\p{N}"]*(?:[\s-]|$))/gu, ' ');

const round = (score: number) => Math.round(score * 10_000) / 10_000;

function documentItem(row: DocumentRow, site: string): TAskResultItem {
  const url = `${site}${row.path}`;
  if (row.kind === 'operation') {
    const { operationId, method, pathTemplate, tool } = row.data as Record<string, string>;
    return {
      url,
      name: row.name,
      site,
      score: round(row.score),
      description: row.description,
      schema_object: {
        '@context': 'https://schema.org',
        '@type': 'WebAPI',
        identifier: operationId,
        name: row.name,
        description: row.description,
        url,
        documentation: `${site}/openapi.json`,
        provider: { '@type': 'Organization', name: 'Convene', url: site },
        potentialAction: {
          '@type': 'Action',
          name: operationId,
          ...(tool ? { alternateName: tool } : {}),
          target: {
            '@type': 'EntryPoint',
            urlTemplate: `${site}${pathTemplate}`,
            httpMethod: method,
            contentType: 'application/json',
          },
        },
      },
    };
  }
  const { guide, guideTitle, section } = row.data as Record<string, string>;
  return {
    url,
    name: row.name,
    site,
    score: round(row.score),
    description: row.description,
    schema_object: {
      '@context': 'https://schema.org',
      '@type': 'TechArticle',
      headline: row.name,
      description: row.description,
      url,
      ...(section ? { articleSection: section } : {}),
      ...(guide
        ? { isPartOf: { '@type': 'TechArticle', name: guideTitle ?? guide, url: `${site}/${guide}` } }
        : {}),
    },
  };
}

function spaceItem(row: SpaceRow, site: string): TAskResultItem {
  const url = `${site}/hub/space/${row.id}`;
  const count = Number(row.participant_count);
  const people = `${count} participant${count === 1 ? '' : 's'}`;
  const agenda = row.agenda ? ` Agenda: ${row.agenda}` : '';
  return {
    url,
    name: row.name,
    site,
    score: round(row.score),
    description: `${row.description}${agenda} (public meeting space, ${people}; joining needs an invitation key from its owner)`,
    schema_object: {
      '@context': 'https://schema.org',
      '@type': 'Event',
      identifier: row.id,
      name: row.name,
      description: row.description,
      ...(row.agenda ? { about: row.agenda } : {}),
      url,
      eventStatus: 'https://schema.org/EventScheduled',
      eventAttendanceMode: 'https://schema.org/OnlineEventAttendanceMode',
      location: { '@type': 'VirtualLocation', url },
      maximumAttendeeCapacity: limits.participantsPerSpace,
      remainingAttendeeCapacity: Math.max(0, limits.participantsPerSpace - count),
    },
  };
}
