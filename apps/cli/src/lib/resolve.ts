import { CliError, UsageError } from './errors';
import { ExitCode } from './exit-codes';
import { inline } from './output';
import { type Value, verbatim } from './quote';

/** How `pick` and `find` know an item: its noun in messages, its id and its name. */
export interface Naming<T> {
  noun: string;
  id: (item: T) => string;
  name: (item: T) => string;
  /**
   * Whether the start of a name names it too, when it starts no other (any case: `ada` for Ada
   * Lovelace): for participants, whom people call by their first name, not for documents, where
   * `plan` acting on plan.md by itself would surprise.
   */
  byNameStart?: boolean;
}

/** How a participant is known: its participantId and its display name. */
export const participantNaming = {
  noun: 'participant',
  id: (p: { participantId: string }) => p.participantId,
  name: (p: { name: string }) => p.name,
};

/**
 * Finds a participant or an artifact by what a person would type: its id, its name (any case),
 * the start of its id (4 characters or more) or, with `byNameStart`, of its name. Two of the same
 * name, or two that start so, ask for the id.
 */
export function pick<T>(
  items: readonly T[],
  reference: string,
  what: Naming<T> & { listCommand: string /** The space looked in, named in the refusal. */; where?: string },
): T {
  const found = find(items, reference, what);
  if (found) return found;
  const near = closest(reference, items.map(what.name));
  // Said of what starts an id (too short to be taken as one), not of a short name (Ed, Bea).
  const startsAnId =
    reference.length < 4 && items.some((item) => what.id(item).startsWith(reference.toLowerCase()));
  const short = startsAnId ? 'An id start needs 4 characters or more. ' : '';
  throw new CliError(`no ${what.noun} "${reference}"${what.where ? ` in ${inline(what.where)}` : ''}`, {
    exitCode: ExitCode.notFound,
    hint: `${short}${near ? `Did you mean "${inline(near)}"? ` : ''}See them with \`${what.listCommand}\`.`,
  });
}

/**
 * What is named exactly so: by its id, or its whole name, in the case typed first, then in any
 * case; undefined when nothing is (two of the name are a usage error naming them). No id start,
 * no name start. The case typed wins: with notes.md and Notes.md in a space (the API takes both),
 * `notes.md` is the one named so, and only `NOTES.MD` is ambiguous.
 */
export function findExact<T>(
  items: readonly T[],
  reference: string,
  what: Omit<Naming<T>, 'byNameStart'>,
): T | undefined {
  const exact = items.find((item) => what.id(item) === reference);
  if (exact) return exact;
  const typed = items.filter((item) => what.name(item).normalize('NFC') === reference.normalize('NFC'));
  const named = typed.length > 0 ? typed : items.filter((item) => sameName(what.name(item), reference));
  if (named.length > 1) {
    // Called so in other cases, each its own: the exact case names one too (findExact's first try).
    const cased = typed.length === 0 && new Set(named.map((item) => what.name(item))).size === named.length;
    throw new UsageError(
      `${named.length} ${what.noun}s are called "${reference}"`,
      `Name one ${cased ? 'in its exact case, or ' : ''}by id: ${named.map((item) => `${inline(what.name(item))} (${what.id(item)})`).join(', ')}`,
    );
  }
  return named[0];
}

/**
 * A name as names are compared: in one Unicode normal form (NFC: an `É` typed as `E` and a
 * combining accent, as macOS gives file names, is the `É` the server keeps) and in any case.
 */
export const fold = (name: string): string => name.normalize('NFC').toLowerCase();

/**
 * A name as a start or a typo of it is compared: in any case and without its accents (decomposed,
 * its combining marks left out), so that `zoe` starts Zoë Éclair, as a keyboard without `ë` types
 * it. A whole name is still compared by `fold`: `Zoe` and `Zoë` are two names.
 */
export const loose = (name: string): string => name.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();

/** Whether a name is the one typed, in any case and normal form. */
export function sameName(name: string, reference: string): boolean {
  return fold(name) === fold(reference);
}

/**
 * How a hint names `item` so that the command it suggests finds that one: its name when `resolve`
 * (what that command does with what it is given) finds it by its name, else its id.
 */
export function hintName<T>(
  item: T,
  what: { id: (item: T) => string; name: (item: T) => string },
  resolve: (reference: string) => T | undefined,
): Value {
  let found: T | undefined;
  try {
    found = resolve(what.name(item));
  } catch {
    // Several answer to the name: a usage error naming them.
  }
  return found === item ? what.name(item) : verbatim(what.id(item));
}

/** What `pick` finds, undefined when nothing is named so (several are a usage error naming them). */
export function find<T>(items: readonly T[], reference: string, what: Naming<T>): T | undefined {
  const exact = findExact(items, reference, what);
  if (exact) return exact;
  const start = reference.toLowerCase();
  const label = (item: T) => `${inline(what.name(item))} (${what.id(item)})`;
  const byId = reference.length >= 4 ? items.filter((item) => what.id(item).startsWith(start)) : [];
  const byName =
    what.byNameStart && start !== ''
      ? items.filter((item) => loose(what.name(item)).startsWith(loose(reference)))
      : [];
  const prefixed = [...new Set([...byId, ...byName])];
  if (prefixed.length > 1) {
    const whose = byName.length === 0 ? 'ids' : byId.length === 0 ? 'names' : 'names or ids';
    throw new UsageError(
      `${prefixed.length} ${what.noun}s have ${whose} starting with "${reference}"`,
      `Name one: ${prefixed.map(label).join(', ')}`,
    );
  }
  return prefixed[0];
}

/**
 * Finds what an argument that takes only an id names: the id, or its start (4 characters or more,
 * any case), as `pick` takes a prefix. A shorter start, or several ids that start so, is a usage
 * error (the second naming them); none is not found, with where to see the ids.
 */
export function byIdStart<T>(
  items: readonly T[],
  reference: string,
  what: { noun: string; id: (item: T) => string; label: (item: T) => string; listCommand: string },
): T {
  const start = reference.toLowerCase();
  const exact = items.find((item) => what.id(item) === start);
  if (exact) return exact;
  const listed = `\`${what.listCommand}\``;
  if (start.length < 4) {
    throw new UsageError(
      `"${reference}" is too short to name a ${what.noun}: give its id or its first 4 characters or more`,
      `See the ${what.noun}s and their ids with ${listed}.`,
    );
  }
  const matches = items.filter((item) => what.id(item).startsWith(start));
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1) {
    throw new UsageError(
      `${matches.length} ${what.noun}s have ids starting with "${reference}"`,
      `Name one: ${matches.map((item) => inline(what.label(item))).join(', ')}`,
    );
  }
  throw new CliError(`no ${what.noun} "${reference}"`, {
    exitCode: ExitCode.notFound,
    hint: `See the ${what.noun}s and their ids with ${listed} (an id or its first 4 characters or more).`,
  });
}

/**
 * The name a typo most likely meant: the one name that starts with what was typed (3 characters or
 * more), as `plan` for `plan.md`, `release` for `Release plan` or `hist` for `history` (though
 * `list` is one letter away); else the one fewest edits away (any case), if it is within a third of
 * the name's length, as commander suggests commands; else the one name whose start is a typo away
 * from what was typed (`lanch` for `Launch plan`). Compared in any case and without accents
 * (`loose`: `zoe` for Zoë Éclair).
 */
export function closest(typed: string, names: readonly string[]): string | undefined {
  const lower = loose(typed);
  const unique = [...new Set(names)];
  if (lower.length >= 3) {
    const started = unique.filter((name) => loose(name).startsWith(lower));
    if (started.length === 1) return started[0];
  }
  let best: { name: string; distance: number } | undefined;
  for (const name of unique) {
    const distance = editDistance(lower, loose(name));
    if (distance <= Math.max(1, Math.floor(name.length / 3)) && (!best || distance < best.distance)) {
      best = { name, distance };
    }
  }
  if (best) return best.name;
  // A typo in the start of a longer name (`lanch` for `Launch plan`): the one name whose start is
  // one edit from what was typed (two from 8 letters on), an insertion or a deletion included.
  // Five letters at least: a shorter word is one edit from the start of too many names (`desk`,
  // `Design review`).
  if (lower.length >= 5) {
    const bound = Math.max(1, Math.floor(lower.length / 4));
    const started = unique.filter((name) => {
      const start = loose(name);
      return (
        start.length > lower.length + 1 &&
        [-1, 0, 1].some((more) => editDistance(lower, start.slice(0, lower.length + more)) <= bound)
      );
    });
    if (started.length === 1) return started[0];
  }
  return undefined;
}

/** Levenshtein distance, with a swap of two neighbours counted as one edit (`sned` → `send`). */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
      }
    }
  }
  return d[a.length]![b.length]!;
}
