import { shellValue, type Value } from './quote';

/** What a suggested command line holds after its command's words. */
export interface LineParts {
  /** Its arguments, in order: the names a person gave (quoted) and words of ours (`verbatim`). */
  args?: readonly Value[];
  /** Its options, in order, with their values (`true`: a flag alone, `--json`). */
  options?: Readonly<Record<string, Value | true>>;
}

/**
 * `convene WORDS ARGS… OPTIONS…`, each value a shell word (`quoted`), so that the line pastes as
 * it is. An argument that starts with `-` would be read as an option (`unknown option
 * '-draft.md'`): then every argument goes after `--`, which ends the options, and the options
 * before it, since after it they would be arguments too: `convene artifact write --file F --
 * "-draft.md"`. `words`: the command's own words (`artifact write`), nothing a person gave.
 */
export function commandLine(words: string, { args = [], options = {} }: LineParts = {}): string {
  const flags = Object.entries(options).map(([flag, value]) =>
    value === true ? flag : `${flag} ${shellValue(value)}`,
  );
  const positional = args.map(shellValue);
  const dashed = args.some((arg) => typeof arg === 'string' && arg.startsWith('-'));
  const parts = dashed ? [...flags, '--', ...positional] : [...positional, ...flags];
  return ['convene', words, ...parts].join(' ');
}
