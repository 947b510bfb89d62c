import type { Command } from '@commander-js/extra-typings';

/** One node of the command tree as completion needs it: a path, its subcommands and flags. */
export interface CompletionNode {
  /** Space-separated command names below `convene` ('' for the program itself). */
  path: string;
  subcommands: { name: string; description: string }[];
  options: { flags: string[]; description: string; takesValue: boolean; space: boolean }[];
  /** Whether its first argument may be a space (`convene tail [space]`): space names complete there. */
  spaceArgument: boolean;
}

/** What completes space names: `convene __complete spaces`, which reads the credential file only. */
const SPACES = 'convene __complete spaces 2>/dev/null';

const isHidden = (command: Command) => (command as unknown as { _hidden?: boolean })._hidden === true;

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
    const first = (command as unknown as { registeredArguments: { name(): string }[] })
      .registeredArguments[0];
    nodes.push({
      path,
      spaceArgument: first !== undefined && /^space\b/.test(first.name()),
      subcommands: command.commands
        .filter((c) => !isHidden(c as Command))
        .filter((c) => c.name() !== 'help' || path === '')
        .flatMap((c) =>
          [c.name(), ...c.aliases()].map((name) => ({ name, description: c.summary() || c.description() })),
        ),
      options: [
        ...own,
        { long: '--help', short: '-h', description: 'show help', required: false, optional: false },
      ].map((o) => ({
        flags: [o.long, o.short].filter((f): f is string => Boolean(f)),
        description: o.description,
        takesValue: Boolean(o.required || o.optional),
        space: o.long === '--space',
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
 * `path flag` for each flag that takes a value where it is given (`inbox --wait`; `-f` is a file
 * to `artifact create` and no value to `inbox`): the word after it is that value, not an argument.
 */
const valueFlags = (nodes: CompletionNode[]) =>
  nodes.flatMap((n) =>
    n.options.filter((o) => o.takesValue).flatMap((o) => o.flags.map((f) => single(`${n.path} ${f}`))),
  );

export function bashScript(nodes: CompletionNode[]): string {
  const known = nodes.filter((n) => n.path).map((n) => single(n.path));
  const cases = nodes
    .map((n) => {
      const words = [...n.subcommands.map((s) => s.name), ...n.options.flatMap((o) => o.flags)].join(' ');
      return `    ${single(n.path)}) words=${single(words)} ;;`;
    })
    .join('\n');
  const spaceArguments = nodes.filter((n) => n.spaceArgument).map((n) => single(n.path));
  const spaceOptions = nodes.filter((n) => n.options.some((o) => o.space)).map((n) => single(n.path));
  return `# convene completion for bash. Load it with:
#   source <(convene completion bash)
# or keep it: convene completion bash > ~/.local/share/bash-completion/completions/convene
# Space names complete from convene's credential file, without asking the server.
_convene() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="" path="" candidate word words i args=0 url=""
  ((COMP_CWORD > 1)) && prev="\${COMP_WORDS[COMP_CWORD-1]}"
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    if [[ "$word" == -* ]]; then
      # A flag's value is not an argument; --url's is the server whose spaces complete.
      case "$path $word" in
        ${valueFlags(nodes).join('|')})
          [[ "$word" == --url ]] && url="\${COMP_WORDS[i+1]}"
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
  local spaces=""
  if [[ "$prev" == --space || "$prev" == -s ]]; then
    case "$path" in ${spaceOptions.join('|') || "''"}) spaces=1 ;; esac
  elif [[ "$cur" != -* ]] && ((args == 0)); then
    case "$path" in ${spaceArguments.join('|') || "''"}) spaces=1 ;; esac
  fi
  if [[ -n "$spaces" ]]; then
    # Names are taken in any case, as the commands take them.
    local name nocase
    nocase=$(shopt -p nocasematch)
    shopt -s nocasematch
    COMPREPLY=()
    while IFS= read -r name; do
      [[ -n "$name" && "$name" == "$cur"* ]] && COMPREPLY+=("$(printf '%q' "$name")")
    done < <(CONVENE_URL="\${url:-$CONVENE_URL}" ${SPACES})
    $nocase
    return
  fi
  case "$path" in
${cases}
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -o bashdefault -F _convene convene
`;
}

export function zshScript(nodes: CompletionNode[]): string {
  const escapeColons = (text: string) => text.replaceAll(':', '\\:');
  // Filled as `name=(key value …)`: in `name['key']=value` zsh keeps the quotes in the key, and no
  // lookup would ever match it.
  const table = (value: (n: CompletionNode) => string) =>
    nodes.map((n) => `  ${single(n.path)} ${single(value(n))}`).join('\n');
  const entries = `_convene_subcommands=(\n${table((n) =>
    n.subcommands.map((s) => `${escapeColons(s.name)}:${oneLine(s.description)}`).join('\n'),
  )}\n)\n_convene_options=(\n${table((n) =>
    n.options.flatMap((o) => o.flags.map((f) => `${escapeColons(f)}:${oneLine(o.description)}`)).join('\n'),
  )}\n)`;
  const keys = (paths: string[]) => paths.map((path) => `${path} 1`).join(' ');
  const spaceArguments = keys(nodes.filter((n) => n.spaceArgument).map((n) => single(n.path)));
  const spaceOptions = keys(nodes.filter((n) => n.options.some((o) => o.space)).map((n) => single(n.path)));
  return `#compdef convene
# convene completion for zsh. Load it with:
#   source <(convene completion zsh)
# or keep it as _convene in a directory of your $fpath.
# Space names complete from convene's credential file, without asking the server.
typeset -gA _convene_subcommands _convene_options _convene_values _convene_space_args _convene_space_opts
${entries}
_convene_values=(${keys(valueFlags(nodes))})
_convene_space_args=(${spaceArguments})
_convene_space_opts=(${spaceOptions})
_convene() {
  local p="" w candidate prev="\${words[CURRENT-1]}" url=""
  local -i i args=0
  local -a subs opts spaces
  for (( i = 2; i < CURRENT; i++ )); do
    w="\${words[i]}"
    if [[ $w == -* ]]; then
      # A flag's value is not an argument; --url's is the server whose spaces complete.
      if (( \${+_convene_values[$p $w]} )); then
        [[ $w == --url ]] && url="\${words[i+1]}"
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
  if [[ ( ($prev == --space || $prev == -s) && -n "\${_convene_space_opts[$p]}" ) ||
        ( $PREFIX != -* && args -eq 0 && -n "\${_convene_space_args[$p]}" ) ]]; then
    spaces=("\${(@f)$(CONVENE_URL="\${url:-$CONVENE_URL}" ${SPACES})}")
    # Names are taken in any case, as the commands take them.
    compadd -M 'm:{a-zA-Z}={A-Za-z}' -a spaces
    return
  fi
  subs=("\${(@f)_convene_subcommands[$p]}")
  opts=("\${(@f)_convene_options[$p]}")
  if [[ $PREFIX == -* ]]; then
    _describe -t options option opts
  elif [[ -n "\${_convene_subcommands[$p]}" ]]; then
    _describe -t commands command subs
  else
    _files
  fi
}
compdef _convene convene
`;
}

export function fishScript(nodes: CompletionNode[]): string {
  const lines = [
    '# convene completion for fish. Load it with:',
    '#   convene completion fish | source',
    "# Space names complete from convene's credential file, without asking the server.",
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
    if (node.spaceArgument) {
      const condition = [...seen, ...notDeeper].join('; and ');
      lines.push(`complete -c convene -n ${single(condition)} -a ${single(`(${SPACES})`)}`);
    }
    for (const option of node.options) {
      const long = option.flags.find((f) => f.startsWith('--'));
      const short = option.flags.find((f) => /^-[^-]$/.test(f));
      const flags = [long ? `-l ${long.slice(2)}` : '', short ? `-s ${short.slice(1)}` : '']
        .filter(Boolean)
        .join(' ');
      const condition = [...seen, ...notDeeper].join('; and ');
      const value = option.space ? ` -x -a ${single(`(${SPACES})`)}` : option.takesValue ? ' -r -F' : '';
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
      `complete -c convene -n __fish_use_subcommand ${flags}${option.takesValue ? ' -r' : ''} -d ${single(oneLine(option.description))}`,
    );
  }
  return `${lines.join('\n')}\n`;
}
