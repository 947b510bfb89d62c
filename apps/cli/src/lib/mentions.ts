import { closest, fold } from './resolve';

/**
 * An `@` that starts a word (not the one of an e-mail address), as the server reads a text
 * message's `@Name`s (core's nameFragments); it looks at the first 64 of them.
 */
const AT_SIGN = /(?<![\p{L}\p{N}_])@/gu;
const MAX_AT_SIGNS = 64;

interface Named {
  participantId: string;
  name: string;
  status: string;
}

/** Whether the server would count a participant as mentioned by name: active or muted. */
export const canBeMentioned = (p: { status: string }): boolean =>
  p.status === 'active' || p.status === 'muted';

/** An `@Word` of a sent message that mentions nobody, and the names it may have meant. */
export interface StrayMention {
  /** What followed the @, up to a space (`Hana`, `hana-host`, `"Hana`). */
  word: string;
  near: string[];
}

/**
 * The `@Word`s of a text message that mentioned nobody. The server's rule: a participant in the
 * space (active or muted) is mentioned when their whole name, in any case and either Unicode form
 * (compared composed, as `fold` compares names), follows the @ and is
 * followed by the end or a character that cannot continue a name. Which characters continue one
 * is the database's to say (its locale), so a word counts as a mention when it starts with the
 * name of someone the server's answer says was mentioned (`mentions`), and as a stray otherwise,
 * unless it is the start of such a name (`@Ada` with Ada Lovelace mentioned by --mention).
 * The names it may have meant: those it starts (`@Hana`, Hana Host), else the one a typo away
 * (`@HanaHost`, `@hana-host`).
 */
export function strayMentions(content: string, participants: readonly Named[], mentions: readonly string[]) {
  const live = participants.filter(canBeMentioned);
  const mentioned = live.filter((p) => mentions.includes(p.participantId)).map((p) => fold(p.name));
  const names = [...new Set(live.map((p) => p.name))];
  const strays: StrayMention[] = [];
  let seen = 0;
  for (const match of content.matchAll(AT_SIGN)) {
    if (++seen > MAX_AT_SIGNS) break;
    const after = content.slice(match.index + 1);
    // As much as the longest name takes, decomposed or not.
    const afterFolded = fold(after.slice(0, 1024));
    if (mentioned.some((name) => afterFolded.startsWith(name))) continue;
    // An @ alone (`@ 5pm`), or one of several (`@@`), was not meant as a mention.
    const word = /^[^\s@]+/u.exec(after)?.[0].replace(/[.,:;!?)\]}]+$/u, '');
    if (!word || strays.some((s) => s.word === word)) continue;
    // A package scope or a path (`@types/node`, `@clack/prompts`), not someone called.
    if (word.includes('/')) continue;
    const typed = fold(word.replace(/^["'“‘]+/u, ''));
    // `@Ada` for Ada Lovelace, whom --mention mentioned: not a mention, but not a stray either.
    if (typed && mentioned.some((name) => name.startsWith(typed))) continue;
    const started = typed ? names.filter((name) => fold(name).startsWith(typed)) : [];
    const typo = typed ? closest(typed, names) : undefined;
    const near = started.length > 0 ? started.slice(0, 3) : typo ? [typo] : [];
    strays.push({ word, near });
  }
  return strays;
}
