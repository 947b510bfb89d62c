import type { Command } from '@commander-js/extra-typings';

/**
 * What the word after a flag may be: a space name, one of the flag's choices, a file or directory
 * name (`--file <file>`, `--data-dir <dir>`), or free text nobody can complete (`--since`).
 */
export type ValueKind = 'spaces' | 'choices' | 'files' | 'directories' | 'text';

/** One node of the command tree as completion needs it: a path, its subcommands and flags. */
export interface CompletionNode {
  /** Space-separated command names below `convene` ('' for the program itself). */
  path: string;
  subcommands: { name: string; description: string }[];
  options: {
    flags: string[];
    description: string;
    /** How its value completes; `undefined` for a flag that takes none. */
    value: ValueKind | undefined;
    choices: string[];
  }[];
  /** Whether its first argument may be a space (`convene tail [space]`): space names complete there. */
  spaceArgument: boolean;
  /** The values its first argument may take (`convene completion bash|zsh|fish`), if it says so. */
  argumentChoices: string[];
}

/** What completes space names: `convene __complete spaces`, which reads the credential file only. */
const SPACES = 'convene __complete spaces 2>/dev/null';

const isHidden = (command: Command) => (command as unknown as { _hidden?: boolean })._hidden === true;

interface CommanderArgument {
  name(): string;
  argChoices?: string[];
}

/** What completion reads of a flag (commander's `Option`, and the help flag it adds itself). */
interface CommanderOption {
  flags: string;
  long?: string | undefined;
  short?: string | undefined;
  description: string;
  required: boolean;
  optional: boolean;
  argChoices?: string[] | undefined;
}

const HELP: CommanderOption = {
  flags: '-h, --help',
  long: '--help',
  short: '-h',
  description: 'show help',
  required: false,
  optional: false,
};

/** A flag's value by what its help calls it: `<file>` and `<dir>` are paths, anything else text. */
function valueKind(option: CommanderOption): ValueKind | undefined {
  if (!option.required && !option.optional) return undefined;
  if (option.long === '--space') return 'spaces';
  if (option.argChoices?.length) return 'choices';
  if (/<file>|\[file\]/.test(option.flags)) return 'files';
  if (/<dir>|\[dir\]/.test(option.flags)) return 'directories';
  return 'text';
}

/** The tree of a program, walked once: every path with what may follow it. */
export function completionTree(program: Command): CompletionNode[] {
  const nodes: CompletionNode[] = [];
  const visit = (command: Command, path: string) => {
    // The program's options as each command's help lists them (serve leaves out --url).
    const globals = path === '' ? [] : command.createHelp().visibleGlobalOptions(command);
    const own =
      path === ''
        ? program.options.filter((o) => !o.hidden)
        : [...command.options.filter((o) => !o.hidden), ...globals];
    const first = (command as unknown as { registeredArguments: CommanderArgument[] }).registeredArguments[0];
    nodes.push({
      path,
      spaceArgument: first !== undefined && /^space\b/.test(first.name()),
      argumentChoices: first?.argChoices ?? [],
      subcommands: command.commands
        .filter((c) => !isHidden(c as Command))
        .filter((c) => c.name() !== 'help' || path === '')
        .flatMap((c) =>
          [c.name(), ...c.aliases()].map((name) => ({ name, description: c.summary() || c.description() })),
        ),
      options: [...own, HELP].map((o) => ({
        flags: [o.long, o.short].filter((f): f is string => Boolean(f)),
        description: o.description,
        value: valueKind(o),
        choices: o.argChoices ?? [],
      })),
    });
    for (const sub of command.commands.filter((c) => !isHidden(c as Command))) {
      for (const name of [sub.name(), ...sub.aliases()])
        visit(sub as Command, path ? `${path} ${name}` : name);
    }
  };
  visit(program, '');
  return nodes;
}

const single = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;
const oneLine = (text: string) => text.split('\n')[0]!.trim();

/**
 * `path flag` of every flag that takes a value, with the flag (`-f` is a file to `artifact create`
 * and no value to `inbox`): the word after it is that value, not an argument.
 */
const valueFlags = (nodes: CompletionNode[]) =>
  nodes.flatMap((n) =>
    n.options
      .filter((o) => o.value !== undefined)
      .flatMap((o) => o.flags.map((flag) => ({ key: `${n.path} ${flag}`, option: o }))),
  );

/** Bash `case` patterns, `'a'|'b'`, of the keys given (`''` for none, which no word matches). */
const patterns = (keys: string[]) => keys.map(single).join('|') || "''";

export function bashScript(nodes: CompletionNode[]): string {
  const known = nodes.filter((n) => n.path).map((n) => single(n.path));
  const values = valueFlags(nodes);
  const ofKind = (kind: ValueKind) =>
    patterns(values.filter((v) => v.option.value === kind).map((v) => v.key));
  const choiceCases = values
    .filter((v) => v.option.value === 'choices')
    .map((v) => `      ${single(v.key)}) words=${single(v.option.choices.join(' '))} ;;`);
  const flagCases = nodes.map(
    (n) => `      ${single(n.path)}) words=${single(n.options.flatMap((o) => o.flags).join(' '))} ;;`,
  );
  const argumentCases = nodes
    .filter((n) => !n.spaceArgument)
    .map((n) => [n.path, [...n.argumentChoices, ...n.subcommands.map((s) => s.name)]] as const)
    .filter(([, words]) => words.length > 0)
    .map(([path, words]) => `      ${single(path)}) words=${single(words.join(' '))} ;;`);
  const spaceArguments = patterns(nodes.filter((n) => n.spaceArgument).map((n) => n.path));
  return `# convene completion for bash. Load it with:
#   source <(convene completion bash)
# or keep it: convene completion bash > ~/.local/share/bash-completion/completions/convene
# Space names complete from convene's credential file, without asking the server.
_convene() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" flag="" candidate word words="" spaces="" i args=0 url=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    if [[ "$word" == -* ]]; then
      # A flag's value is not an argument; --url's is the server whose spaces complete.
      case "$path $word" in
        ${patterns(values.map((v) => v.key))})
          [[ "$word" == --url ]] && url="\${COMP_WORDS[i+1]}"
          ((i + 1 == COMP_CWORD)) && flag="$word"
          ((i++)) ;;
      esac
      continue
    fi
    candidate="\${path:+$path }$word"
    case "$candidate" in
      ${known.join('|')}) path="$candidate"; args=0 ;;
      *) ((args++)) ;;
    esac
  done
  COMPREPLY=()
  # Flags only for a word that starts like one; anything else gets what goes there, or nothing:
  # never the flags (their common "-" would be typed in) nor the file names, but where a file goes.
  if [[ -n "$flag" ]]; then
    case "$path $flag" in
      ${ofKind('spaces')}) spaces=1 ;;
      ${ofKind('files')}) compopt -o default 2>/dev/null; return ;;
      ${ofKind('directories')}) compopt -o dirnames 2>/dev/null; return ;;
${choiceCases.join('\n')}
    esac
  elif [[ "$cur" == -* ]]; then
    case "$path" in
${flagCases.join('\n')}
    esac
  elif ((args == 0)); then
    case "$path" in
      ${spaceArguments}) spaces=1 ;;
${argumentCases.join('\n')}
    esac
  fi
  if [[ -n "$spaces" ]]; then
    # Names are taken in any case, as the commands take them.
    local name nocase
    nocase=$(shopt -p nocasematch)
    shopt -s nocasematch
    while IFS= read -r name; do
      [[ -n "$name" && "$name" == "$cur"* ]] && COMPREPLY+=("$(printf '%q' "$name")")
    done < <(CONVENE_URL="\${url:-$CONVENE_URL}" ${SPACES})
    $nocase
    return
  fi
  [[ -n "$words" ]] && COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -F _convene convene
`;
}

export function zshScript(nodes: CompletionNode[]): string {
  const escapeColons = (text: string) => text.replaceAll(':', '\\:');
  // Filled as `name=(key value …)`: in `name['key']=value` zsh keeps the quotes in the key, and no
  // lookup would ever match it.
  const table = (rows: (readonly [string, string])[]) =>
    rows.map(([key, value]) => `  ${single(key)} ${single(value)}`).join('\n');
  const perNode = (value: (n: CompletionNode) => string) => table(nodes.map((n) => [n.path, value(n)]));
  const values = valueFlags(nodes);
  const entries = `_convene_subcommands=(\n${perNode((n) =>
    n.subcommands.map((s) => `${escapeColons(s.name)}:${oneLine(s.description)}`).join('\n'),
  )}\n)\n_convene_options=(\n${perNode((n) =>
    n.options.flatMap((o) => o.flags.map((f) => `${escapeColons(f)}:${oneLine(o.description)}`)).join('\n'),
  )}\n)\n_convene_values=(\n${table(values.map((v) => [v.key, v.option.value!]))}\n)\n_convene_choices=(\n${table(
    [
      // An argument's choices under its command's path, a flag's under `path flag`.
      ...nodes
        .filter((n) => n.argumentChoices.length)
        .map((n) => [n.path, n.argumentChoices.join('\n')] as const),
      ...values
        .filter((v) => v.option.choices.length)
        .map((v) => [v.key, v.option.choices.join('\n')] as const),
    ],
  )}\n)`;
  const spaceArguments = nodes
    .filter((n) => n.spaceArgument)
    .map((n) => `${single(n.path)} 1`)
    .join(' ');
  return `#compdef convene
# convene completion for zsh. Load it with:
#   source <(convene completion zsh)
# or keep it as _convene in a directory of your $fpath.
# Space names complete from convene's credential file, without asking the server.
typeset -gA _convene_subcommands _convene_options _convene_values _convene_choices _convene_space_args
${entries}
_convene_space_args=(${spaceArguments})
_convene() {
  local p="" w candidate flag="" what="" url=""
  local -i i args=0
  local -a subs opts spaces choices
  for (( i = 2; i < CURRENT; i++ )); do
    w="\${words[i]}"
    if [[ $w == -* ]]; then
      # A flag's value is not an argument; --url's is the server whose spaces complete.
      if (( \${+_convene_values[$p $w]} )); then
        [[ $w == --url ]] && url="\${words[i+1]}"
        (( i + 1 == CURRENT )) && flag="$w"
        (( i++ ))
      fi
      continue
    fi
    candidate="\${p:+$p }$w"
    if (( \${+_convene_options[$candidate]} )); then
      p="$candidate"
      args=0
    else
      (( args++ ))
    fi
  done
  # Flags only for a word that starts like one; anything else gets what goes there, or nothing:
  # never the file names, but where a file goes.
  if [[ -n $flag ]]; then
    what="\${_convene_values[$p $flag]}"
  elif [[ $PREFIX == -* ]]; then
    what=options
  elif (( args == 0 )); then
    if [[ -n "\${_convene_space_args[$p]}" ]]; then
      what=spaces
    elif [[ -n "\${_convene_choices[$p]}" ]]; then
      what=choices
    elif [[ -n "\${_convene_subcommands[$p]}" ]]; then
      what=commands
    fi
  fi
  case $what in
    spaces)
      spaces=(\${(f)"$(CONVENE_URL="\${url:-$CONVENE_URL}" ${SPACES})"})
      # Names are taken in any case, as the commands take them.
      compadd -M 'm:{a-zA-Z}={A-Za-z}' -a spaces ;;
    choices)
      choices=("\${(@f)_convene_choices[$p\${flag:+ $flag}]}")
      compadd -a choices ;;
    files) _files ;;
    directories) _files -/ ;;
    options)
      opts=("\${(@f)_convene_options[$p]}")
      _describe -t options option opts ;;
    commands)
      subs=("\${(@f)_convene_subcommands[$p]}")
      _describe -t commands command subs ;;
  esac
}
# Sourced from ~/.zshrc before the completion system is on: turn it on (as compinit does).
(( $+functions[compdef] )) || { autoload -Uz compinit && compinit -i }
compdef _convene convene
`;
}

/** A flag's value in fish: `-x` takes one and offers no file names, `-r -F` offers them. */
function fishValue(option: CompletionNode['options'][number]): string {
  switch (option.value) {
    case undefined:
      return '';
    case 'spaces':
      return ` -x -a ${single('(__convene_spaces)')}`;
    case 'choices':
      return ` -x -a ${single(option.choices.join(' '))}`;
    case 'files':
      return ' -r -F';
    case 'directories':
      return ` -x -a ${single('(__fish_complete_directories)')}`;
    case 'text':
      return ' -x';
  }
}

export function fishScript(nodes: CompletionNode[]): string {
  const lines = [
    '# convene completion for fish. Load it with:',
    '#   convene completion fish | source',
    "# Space names complete from convene's credential file, without asking the server.",
    // The spaces of the server --url names on the line, else of CONVENE_URL's.
    'function __convene_spaces',
    '    set -l words (commandline -opc)',
    '    set -l url $CONVENE_URL',
    '    set -l at (contains -i -- --url $words)',
    '    and test $at -lt (count $words)',
    '    and set url $words[(math $at + 1)]',
    `    CONVENE_URL=$url ${SPACES}`,
    'end',
    'complete -c convene -f',
  ];
  for (const node of nodes) {
    const names = node.path ? node.path.split(' ') : [];
    const below = node.subcommands.map((s) => s.name).join(' ');
    const seen = names.map((n) => `__fish_seen_subcommand_from ${n}`);
    const at = node.path === '' ? ['__fish_use_subcommand'] : seen;
    const notDeeper = below ? [`not __fish_seen_subcommand_from ${below}`] : [];
    for (const sub of node.subcommands) {
      const condition = (node.path === '' ? at : [...at, ...notDeeper]).join('; and ');
      lines.push(
        `complete -c convene -n ${single(condition)} -a ${single(sub.name)} -d ${single(oneLine(sub.description))}`,
      );
    }
    if (node.path === '') continue;
    if (node.spaceArgument || node.argumentChoices.length) {
      const condition = [...seen, ...notDeeper].join('; and ');
      const words = node.spaceArgument ? '(__convene_spaces)' : node.argumentChoices.join(' ');
      lines.push(`complete -c convene -n ${single(condition)} -a ${single(words)}`);
    }
    for (const option of node.options) {
      const long = option.flags.find((f) => f.startsWith('--'));
      const short = option.flags.find((f) => /^-[^-]$/.test(f));
      const flags = [long ? `-l ${long.slice(2)}` : '', short ? `-s ${short.slice(1)}` : '']
        .filter(Boolean)
        .join(' ');
      const condition = [...seen, ...notDeeper].join('; and ');
      const value = fishValue(option);
      lines.push(
        `complete -c convene -n ${single(condition)} ${flags}${value} -d ${single(oneLine(option.description))}`,
      );
    }
  }
  const globals = nodes.find((n) => n.path === '')!.options;
  for (const option of globals) {
    const long = option.flags.find((f) => f.startsWith('--'));
    const short = option.flags.find((f) => /^-[^-]$/.test(f));
    const flags = [long ? `-l ${long.slice(2)}` : '', short ? `-s ${short.slice(1)}` : '']
      .filter(Boolean)
      .join(' ');
    lines.push(
      `complete -c convene -n __fish_use_subcommand ${flags}${fishValue(option)} -d ${single(oneLine(option.description))}`,
    );
  }
  return `${lines.join('\n')}\n`;
}
