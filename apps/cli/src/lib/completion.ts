import type { Command } from '@commander-js/extra-typings';

/** One node of the command tree as completion needs it: a path, its subcommands and flags. */
export interface CompletionNode {
  /** Space-separated command names below `convene` ('' for the program itself). */
  path: string;
  subcommands: { name: string; description: string }[];
  options: { flags: string[]; description: string; takesValue: boolean }[];
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
    nodes.push({
      path,
      subcommands: command.commands
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
      })),
    });
    for (const sub of command.commands) {
      for (const name of [sub.name(), ...sub.aliases()])
        visit(sub as Command, path ? `${path} ${name}` : name);
    }
  };
  visit(program, '');
  return nodes;
}

const single = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;
const oneLine = (text: string) => text.split('\n')[0]!.trim();

export function bashScript(nodes: CompletionNode[]): string {
  const known = nodes.filter((n) => n.path).map((n) => single(n.path));
  const cases = nodes
    .map((n) => {
      const words = [...n.subcommands.map((s) => s.name), ...n.options.flatMap((o) => o.flags)].join(' ');
      return `    ${single(n.path)}) words=${single(words)} ;;`;
    })
    .join('\n');
  return `# convene completion for bash. Load it with:
#   source <(convene completion bash)
# or keep it: convene completion bash > ~/.local/share/bash-completion/completions/convene
_convene() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" candidate word words i
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    [[ "$word" == -* ]] && continue
    candidate="\${path:+$path }$word"
    case "$candidate" in
      ${known.join('|')}) path="$candidate" ;;
    esac
  done
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
  const entries = nodes
    .map((n) => {
      const subs = n.subcommands.map((s) => `${escapeColons(s.name)}:${oneLine(s.description)}`).join('\n');
      const opts = n.options
        .flatMap((o) => o.flags.map((f) => `${escapeColons(f)}:${oneLine(o.description)}`))
        .join('\n');
      return `_convene_subcommands[${single(n.path)}]=${single(subs)}\n_convene_options[${single(n.path)}]=${single(opts)}`;
    })
    .join('\n');
  return `#compdef convene
# convene completion for zsh. Load it with:
#   source <(convene completion zsh)
# or keep it as _convene in a directory of your $fpath.
typeset -gA _convene_subcommands _convene_options
${entries}
_convene() {
  local p="" w candidate
  local -a subs opts
  for w in "\${(@)words[2,CURRENT-1]}"; do
    [[ $w == -* ]] && continue
    candidate="\${p:+$p }$w"
    (( \${+_convene_options[$candidate]} )) && p="$candidate"
  done
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
    for (const option of node.options) {
      const long = option.flags.find((f) => f.startsWith('--'));
      const short = option.flags.find((f) => /^-[^-]$/.test(f));
      const flags = [long ? `-l ${long.slice(2)}` : '', short ? `-s ${short.slice(1)}` : '']
        .filter(Boolean)
        .join(' ');
      const condition = [...seen, ...notDeeper].join('; and ');
      lines.push(
        `complete -c convene -n ${single(condition)} ${flags}${option.takesValue ? ' -r -F' : ''} -d ${single(oneLine(option.description))}`,
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
