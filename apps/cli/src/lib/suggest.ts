import { commandLine, type LineParts } from './command-line';
import type { Context } from './context';
import { inline } from './output';
import { type Value, verbatim } from './quote';
import { sameName } from './resolve';
import type { HostEntry, StoredSpace } from './store';

/** The commands that take their space as their argument (`convene tail SPACE`) rather than --space. */
const SPACE_ARGUMENT = [
  'space show',
  'space update',
  'space close',
  'leave',
  'tail',
  'inbox',
  'invite',
  'messages',
  'participants',
];

/** The commands that act on no space: a line of theirs names none, whichever the command acted on. */
const SPACELESS = ['space list', 'space create', 'space use', 'join', 'login', 'whoami', 'doctor'];

/**
 * The `convene WORDS …` command line a hint suggests (see `commandLine`), acting on the same space
 * as the command that suggests it: copied as it is, it must not act on the default space instead.
 * The space is named (as its argument for the commands that take it so, else with --space) when
 * it is not the default or was named on the command line; with `always`, whatever it is (`leave`,
 * which off a terminal takes no default). `space`: another than the one the command acted on (a
 * row of `space list`). A server given with --url is given again (CONVENE_URL carries over by itself).
 */
export function suggest(
  ctx: Context,
  words: string,
  options: LineParts & { space?: StoredSpace | undefined; always?: boolean } = {},
): string {
  const { args = [] } = options;
  const chosen = ctx.chosenSpace;
  const space = options.space ?? chosen?.space;
  if (!space || SPACELESS.includes(words)) return ctx.line(words, { args, options: options.options ?? {} });
  // A server named with --url is named again: the line run as it is would go to another.
  const flags = { ...options.options, ...ctx.urlFlag() };
  // Read once: each read is the credential file's.
  const host = ctx.host();
  const named =
    options.always ||
    host.defaultSpace !== space.spaceId ||
    (chosen?.named === true && chosen.space.spaceId === space.spaceId);
  if (!named) return commandLine(words, { args, options: flags });
  // The name, as people type it, unless another saved space shares it (any case) or it holds
  // what a terminal would show escaped: then the id, which names it all the same.
  const shared = namesakesOf(host, space.name, space.spaceId).length > 0;
  const argument: Value = shared || inline(space.name) !== space.name ? verbatim(space.spaceId) : space.name;
  return SPACE_ARGUMENT.includes(words)
    ? commandLine(words, { args: [argument, ...args], options: flags })
    : commandLine(words, { args, options: { ...flags, '--space': argument } });
}

/** The names of the spaces saved for `host` that `name` names too (any case), but `except`'s. */
export const namesakesOf = (host: HostEntry, name: string, except?: string): string[] =>
  Object.values(host.spaces)
    .filter((s) => s.spaceId !== except && sameName(s.name, name))
    .map((s) => s.name);

/**
 * What `space create` and `space update --name` say when `name` is now the name (in any case) of
 * the saved spaces `namesakes` name, on this server: names are not unique, so commands name them
 * by id from now on (by their exact case too, where the names differ in case alone).
 */
export function namesakesWarning(ctx: Context, name: string, namesakes: readonly string[]): string {
  const exactCase = new Set(namesakes).size === namesakes.length;
  // Its ID names the space: not the one this command acted on, which suggest would add.
  const rename = ctx.line('space update', { args: [verbatim('ID')], options: { '--name': verbatim('NEW') } });
  return `You now have ${namesakes.length} spaces called ${JSON.stringify(inline(name))} here: name them by id (\`${suggest(ctx, 'space list')}\` shows the ids)${exactCase ? ' or by their name in its exact case' : ''}, or give one another name with \`${rename}\`.`;
}
