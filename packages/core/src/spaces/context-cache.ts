import type { TContextBundle, TParticipantView } from '@convene/contract';
import { sql } from 'drizzle-orm';
import type { Clock } from '../clock';
import { rowsOf } from '../db/migrate';
import { PreparedStatement } from '../db/prepared';
import type { Db } from '../db/types';
import type { CoreConfig } from '../deps';
import { within } from '../infra/within';
import {
  artifactsFromJson,
  changedSinceFrom,
  contextJsonColumns,
  jsonArray,
  type ParticipantJson,
  participantFromJson,
} from './views';

/**
 * A space's participants as one statement read them: their views in the context bundle's order
 * (created, then id), and that statement's snapshot (pg_current_snapshot() with when the database
 * server started, as text).
 */
export interface ParticipantsAt {
  readonly snapshot: string;
  readonly views: readonly TParticipantView[];
  /** Each participant's place in the order: its creation time, and its index in `views`. */
  readonly created: ReadonlyMap<string, number>;
  readonly places: ReadonlyMap<string, number>;
}

/** A participant of a changed-since read (contextJsonColumns with `changedSince`). */
export type ChangedParticipant = ParticipantJson & { created: number | string };

/** Participants held across every cached space, at most (about 1 kB each, with their JSON). */
const MAX_PARTICIPANTS = 100_000;

/**
 * How long a read of a space this process holds nothing of waits for another such read already
 * in flight, to start from what it brings instead of reading every participant too.
 */
const COLD_READ_WAIT_MS = 2_000;

/** A read of a space's participants about to start: from `base`; `finish` once it is over. */
export interface ParticipantsRead {
  readonly base: ParticipantsAt | undefined;
  /** Call once the read is over, advanced or failed: the reads waiting on it go on. */
  finish(): void;
}

const nothingToFinish = () => {};

/**
 * The participants of the spaces this process sends to, so that a send's reply, which carries
 * every participant (the context bundle), reads from the database only the participants changed
 * since the last read instead of all of them: a space of 1,000 participants cost each send 2.5 ms
 * of PostgreSQL time and 300 kB of JSON to decode and map.
 *
 * Each participant row names the transaction that last changed it (`changed_by`, stamped by a
 * trigger on every update and by default on insert). A read started from a cached entry asks for
 * the rows whose `changed_by` its snapshot does not see: exactly the rows changed or added since,
 * as the new snapshot sees them (a snapshot of an earlier run of the database server, which a
 * restart or a failover may have reused the transaction ids of, reads everything). Rows are never
 * deleted while their space lives (purgeSpaces deletes a space with all it holds). So the entry
 * merged with the rows read is what a full read would have returned in the same statement, on any
 * node, whatever other nodes did meanwhile: the cache only saves work, it never decides an answer.
 *
 * Entries are immutable: two reads in flight from the same entry each merge their own rows into
 * it, and only a read made from the entry still cached replaces it.
 */
export class ParticipantsCache {
  private readonly entries = new Map<string, ParticipantsAt>();
  private held = 0;
  /** The spaces read from nothing right now: settled when that read is over. */
  private readonly coldReads = new Map<string, Promise<void>>();

  constructor(
    private readonly maxParticipants = MAX_PARTICIPANTS,
    private readonly coldReadWaitMs = COLD_READ_WAIT_MS,
  ) {}

  /** The space's cached participants, to start the next read from. */
  get(spaceId: string): ParticipantsAt | undefined {
    return this.entries.get(spaceId);
  }

  /**
   * Where a stream's first read starts. With nothing cached, the first read reads every
   * participant, and reads arriving while it runs wait for it (at most coldReadWaitMs) to start
   * from what it leaves: streams reconnecting together to a space of 1,000 participants (a
   * restart) each read and decoded 300 kB before, a peak that the allocator then kept (1,000
   * streams opening 50 at a time: 26-30 MiB more resident memory, against 9-12 with one such
   * read). A read that waited and finds nothing (the first failed) reads everything itself.
   */
  async startRead(spaceId: string): Promise<ParticipantsRead> {
    const cached = this.entries.get(spaceId);
    if (cached) return { base: cached, finish: nothingToFinish };
    const inFlight = this.coldReads.get(spaceId);
    if (inFlight) {
      await within(inFlight, this.coldReadWaitMs, undefined);
      return { base: this.entries.get(spaceId), finish: nothingToFinish };
    }
    let finish!: () => void;
    const done = new Promise<void>((resolve) => {
      finish = resolve;
    });
    this.coldReads.set(spaceId, done);
    return {
      base: undefined,
      finish: () => {
        if (this.coldReads.get(spaceId) === done) this.coldReads.delete(spaceId);
        finish();
      },
    };
  }

  /**
   * The participants after a read: `rows` are the ones changed since `base` (every participant
   * when the read had no base), `snapshot` the read's own. Cached when `base` still is.
   */
  advance(
    config: CoreConfig,
    spaceId: string,
    base: ParticipantsAt | undefined,
    rows: ChangedParticipant[],
    snapshot: string,
  ): ParticipantsAt {
    const current = this.entries.get(spaceId);
    const next = merge(config, base, rows, snapshot, current);
    if (current === base) {
      if (current) {
        this.entries.delete(spaceId);
        this.held -= current.views.length;
      }
      this.entries.set(spaceId, next);
      this.held += next.views.length;
      // The least recently advanced spaces go first (a Map iterates in insertion order).
      for (const [id, entry] of this.entries) {
        if (this.held <= this.maxParticipants || id === spaceId) break;
        this.entries.delete(id);
        this.held -= entry.views.length;
      }
    }
    return next;
  }
}

/**
 * The views of a cached read as replies carry them (participantsForReply), each with its JSON
 * once assembled: every reply and stream start from the same read shares one array and its pieces.
 */
const replyViews = new WeakMap<readonly TParticipantView[], TParticipantView[]>();
const assembled = new WeakMap<readonly TParticipantView[], Buffer[] | undefined>();
const CLOSE = Buffer.from(']');
const EMPTY = Buffer.from('[]');
const EMPTY_PARTICIPANTS = '"participants":[';

/**
 * Participants per piece of a participants array's JSON. Consecutive reads of a space share the
 * pieces whose participants did not change: a stream start in a space of 1,000 participants, whose
 * own presence changed one of them, encodes about 20 kB instead of 300 kB. The 300 kB each, held
 * until their client read them, made 1,000 streams opening together peak at 85 MiB of malloc'd
 * memory that the allocator kept for good (the process's heap grew from 9 to 75 MiB).
 */
const PIECE = 64;

/** A piece of JSON (`[` or `,`, then its views' JSON), found again by its first view. */
interface Piece {
  readonly views: readonly TParticipantView[];
  readonly first: boolean;
  readonly json: Buffer;
}
const pieces = new WeakMap<TParticipantView, Piece>();

/**
 * A cached read's views for an answer (the same array for every answer from that read, never to
 * be changed), which jsonWithParticipants assembles from pieces of JSON shared between reads.
 */
export function participantsForReply(views: readonly TParticipantView[]): TParticipantView[] {
  let reply = replyViews.get(views);
  if (!reply) {
    reply = [...views];
    replyViews.set(views, reply);
    assembled.set(reply, undefined);
  }
  return reply;
}

/**
 * JSON.stringify(value), encoded, in parts: the `participants` of a cached read
 * (participantsForReply) are not serialised and encoded again for each answer but assembled from
 * pieces shared by every answer from that read, and by later reads where unchanged (a reply of
 * 1,000 participants is 300 kB, 0.6 ms to stringify and encode; a stream writes the parts as they
 * are). The participants must be the first key of that name in the JSON (a string holding it is
 * escaped).
 */
export function jsonPartsWithParticipants(value: { participants?: unknown }): Buffer[] {
  const { participants } = value;
  if (!isAssembled(participants)) return [Buffer.from(JSON.stringify(value))];
  const json = JSON.stringify({ ...value, participants: [] });
  const at = json.indexOf(EMPTY_PARTICIPANTS) + EMPTY_PARTICIPANTS.length - 1;
  return [Buffer.from(json.slice(0, at)), ...participantsJson(participants), Buffer.from(json.slice(at + 2))];
}

/** jsonPartsWithParticipants in one Buffer (a reply's body). */
export function jsonWithParticipants(value: { participants?: unknown }): Buffer {
  const parts = jsonPartsWithParticipants(value);
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}

function participantsJson(views: TParticipantView[]): Buffer[] {
  let parts = assembled.get(views);
  if (parts === undefined) {
    if (views.length === 0) parts = [EMPTY];
    else {
      parts = [];
      for (let at = 0; at < views.length; at += PIECE) parts.push(pieceOf(views, at).json);
      parts.push(CLOSE);
    }
    assembled.set(views, parts);
  }
  return parts;
}

/** The piece of `views` starting at `at`: the one made before when it holds the same views. */
function pieceOf(views: TParticipantView[], at: number): Piece {
  const end = Math.min(at + PIECE, views.length);
  const first = at === 0;
  const known = pieces.get(views[at]!);
  if (known && known.first === first && known.views.length === end - at) {
    let same = true;
    for (let i = at; i < end && same; i++) same = known.views[i - at] === views[i];
    if (same) return known;
  }
  const slice = views.slice(at, end);
  const list = JSON.stringify(slice);
  const piece = {
    views: slice,
    first,
    json: Buffer.from(first ? list.slice(0, -1) : `,${list.slice(1, -1)}`),
  };
  pieces.set(views[at]!, piece);
  return piece;
}

/** True when jsonWithParticipants assembles these participants rather than serialising them. */
export const isAssembled = (participants: unknown): participants is TParticipantView[] =>
  Array.isArray(participants) && assembled.has(participants);

/**
 * `base` with the rows read since it. A changed participant that `latest` (the entry cached now,
 * which a read in flight beside this one may have advanced) already holds as read keeps that view,
 * so reads that overlap share views, and so the pieces of their JSON (1,000 streams opening
 * together each read the participants changed by the streams opened just before).
 */
function merge(
  config: CoreConfig,
  base: ParticipantsAt | undefined,
  rows: ChangedParticipant[],
  snapshot: string,
  latest: ParticipantsAt | undefined,
): ParticipantsAt {
  if (base && rows.length === 0) return { ...base, snapshot };
  const views = base ? [...base.views] : [];
  const joined: ChangedParticipant[] = [];
  for (const row of rows) {
    const place = base?.places.get(row.id);
    if (place === undefined) joined.push(row);
    else views[place] = known(latest, participantFromJson(config, row));
  }
  // Changes only (the everyday case: presence, inbox positions, moderation): the order and the
  // places stay, and only the views array is copied.
  if (base && joined.length === 0) return { snapshot, views, created: base.created, places: base.places };
  const created = new Map(base?.created);
  for (const row of joined) {
    created.set(row.id, Number(row.created));
    views.push(known(latest, participantFromJson(config, row)));
  }
  // Participants who joined since: in the bundle's order (the rows read keep it among themselves).
  if (base) views.sort((a, b) => order(created, a.participantId, b.participantId));
  return { snapshot, views, created, places: new Map(views.map((view, i) => [view.participantId, i])) };
}

/** `view`, or the equal view `entry` holds for the same participant. */
function known(entry: ParticipantsAt | undefined, view: TParticipantView): TParticipantView {
  const place = entry?.places.get(view.participantId);
  const held = place === undefined ? undefined : entry!.views[place]!;
  if (!held) return view;
  const keys = Object.keys(view) as (keyof TParticipantView)[];
  if (keys.length !== Object.keys(held).length) return view;
  return keys.every((key) => held[key] === view[key]) ? held : view;
}

/** created, then id (PostgreSQL compares uuids as their bytes, as lowercase hex compares). */
function order(created: ReadonlyMap<string, number>, a: string, b: string): number {
  const byTime = created.get(a)! - created.get(b)!;
  return byTime !== 0 ? byTime : a < b ? -1 : a > b ? 1 : 0;
}

const caches = new WeakMap<Db, ParticipantsCache>();

/** The process's cache for a database (its pool: sends and stream opens share it). */
export function participantsCacheOf(db: Db): ParticipantsCache {
  let cache = caches.get(db);
  if (!cache) {
    cache = new ParticipantsCache();
    caches.set(db, cache);
  }
  return cache;
}

/** The columns of contextJsonColumns with `changedSince`. */
export interface ChangedContextRow {
  participants: unknown;
  artifacts: unknown;
  snapshot: string;
}

/**
 * The context bundle of a read made from `base` (the space's entry when it started), the cache
 * advanced to it: a stream's first context, and the ones after each change.
 */
export function contextAfterRead(
  cache: ParticipantsCache,
  config: CoreConfig,
  now: Date,
  spaceId: string,
  base: ParticipantsAt | undefined,
  row: ChangedContextRow,
): TContextBundle {
  const changed = jsonArray<ChangedParticipant>(row.participants);
  return {
    participants: participantsForReply(cache.advance(config, spaceId, base, changed, row.snapshot).views),
    artifacts: artifactsFromJson(now, row.artifacts),
    suggestedPollingIntervalMs: config.suggestedPollingIntervalMs,
  };
}

/**
 * A space's context bundle, its participants read since where this process has them: what a
 * stream is sent after a participant or artifact change. Undefined for a space that is gone.
 */
export async function readContext(
  db: Db,
  clock: Clock,
  config: CoreConfig,
  spaceId: string,
): Promise<TContextBundle | undefined> {
  const cache = participantsCacheOf(db);
  const base = cache.get(spaceId);
  const [row] = rowsOf<ChangedContextRow>(
    await contextStatement.execute(db, { spaceId, since: base?.snapshot ?? null }),
  );
  return row && contextAfterRead(cache, config, clock.now(), spaceId, base, row);
}

const contextStatement = new PreparedStatement<{ spaceId: string; since: string | null }>(
  'convene_read_context',
  sql`select ${contextJsonColumns(sql.raw('s.id'), 'since')}
  from spaces s cross join ${changedSinceFrom(sql`${sql.placeholder('since')}::text`, 'since')}
  where s.id = ${sql.placeholder('spaceId')}::uuid`,
);
