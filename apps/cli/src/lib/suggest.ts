import type { Context } from './context';
import { inline } from './output';
import { quoted } from './quote';
import type { StoredSpace } from './store';

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

/**
 * The `convene WORDS` command line a hint suggests, acting on the same space as the command that
 * suggests it: copied as it is, it must not act on the default space instead. The space is named
 * (as its argument for the commands that take it so, else with --space) when it is not the
 * default or was named on the command line; with `always`, whatever it is (`leave`, which off a
 * terminal takes no default). `space`: another than the one the command acted on (a row of
 * `space list`).
 */
export function suggest(
  ctx: Context,
  words: string,
  options: { space?: StoredSpace | undefined; always?: boolean } = {},
): string {
  const chosen = ctx.chosenSpace;
  const space = options.space ?? chosen?.space;
  if (!space) return `convene ${words}`;
  const host = ctx.host();
  const named =
    options.always ||
    host.defaultSpace !== space.spaceId ||
    (chosen?.named === true && chosen.space.spaceId === space.spaceId);
  if (!named) return `convene ${words}`;
  // The name, as people type it, unless another saved space shares it (any case) or it holds
  // what a terminal would show escaped: then the id, which names it all the same.
  const shared = Object.values(host.spaces).some(
    (s) => s.spaceId !== space.spaceId && s.name.toLowerCase() === space.name.toLowerCase(),
  );
  const argument = shared || inline(space.name) !== space.name ? space.spaceId : quoted(space.name);
  const head = SPACE_ARGUMENT.find((command) => words === command || words.startsWith(`${command} `));
  return head
    ? `convene ${head} ${argument}${words.slice(head.length)}`
    : `convene ${words} --space ${argument}`;
}
