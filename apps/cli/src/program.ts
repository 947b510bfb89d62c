import { Command, CommanderError, Help, Option } from '@commander-js/extra-typings';
import pc from 'picocolors';
import { type App, commandPath, createApp, examples } from './app';
import { registerArtifact } from './commands/artifact';
import { registerAsk } from './commands/ask';
import { registerComplete } from './commands/complete';
import { registerCompletion } from './commands/completion';
import { registerDoctor } from './commands/doctor';
import { registerInbox } from './commands/inbox';
import { registerInvite } from './commands/invite';
import { registerJoin } from './commands/join';
import { registerLeave } from './commands/leave';
import { registerLogin } from './commands/login';
import { registerLogout } from './commands/logout';
import { registerMcp } from './commands/mcp';
import { registerMessages } from './commands/messages';
import { registerModeration } from './commands/moderate';
import { registerParticipants } from './commands/participants';
import { registerSend } from './commands/send';
import { registerServe } from './commands/serve';
import { registerSignup } from './commands/signup';
import { registerSpace } from './commands/space';
import { registerTail } from './commands/tail';
import { registerToken } from './commands/token';
import { registerVersion } from './commands/version';
import { registerWebhook } from './commands/webhook';
import { registerWhoami } from './commands/whoami';
import { Context } from './lib/context';
import {
  type CliError,
  KeyNotSavedError,
  NoSpaceSavedError,
  Reported,
  Stopped,
  UsageError,
} from './lib/errors';
import { ExitCode, exitWith, signalExitCode } from './lib/exit-codes';
import { explain, serverFields } from './lib/failure';
import { interruptedChange } from './lib/interrupt';
import { detectMode, neutralise, toJson } from './lib/output';
import { quoted, shellWord } from './lib/quote';
import { listed } from './lib/render';
import { closest } from './lib/resolve';
import { VERSION } from './version';

/** The whole command tree. Exported for `completion`, which walks it. */
export function buildProgram(
  app: App,
  options: {
    jsonErrors?: boolean;
    version?: boolean;
    /** The command line's words (after `convene`), for hints that repeat it corrected. */
    args?: readonly string[];
  } = {},
): Command {
  const program = new Command()
    .name('convene')
    .description('Meeting spaces for agents and humans, from a terminal.')
    .usage('<command> [options]');
  // Commander takes the program's options anywhere on the line, so `send hi --version` printed the
  // version and sent nothing, and `artifact show plan.md --version 1` answered "0.1.0" as the
  // document. --version is convene's own, before any command (gh, kubectl); after one, `run` builds
  // the program without it and the command refuses it as any option it does not know (exit 2).
  // With --json, the JSON `convene version --json` prints: the two forms print the same.
  if (options.version !== false)
    program.version(
      options.jsonErrors ? toJson({ version: VERSION }, 2) : VERSION,
      '-v, --version',
      'print the version',
    );
  program
    .helpOption('-h, --help', 'show help for a command')
    .addOption(
      new Option(
        '--url <url>',
        'the Convene server (env CONVENE_URL; default: the server of the last space created, joined or used, else http://localhost:3000)',
      ),
    )
    .addOption(
      new Option(
        '--json',
        'print JSON (the API’s own field names) instead of text; errors and warnings as JSON lines on stderr',
      ),
    )
    .addOption(new Option('-q, --quiet', 'print only the essential value (an id), no status lines'))
    .addOption(new Option('--no-color', 'plain text without colours (also NO_COLOR=1)'))
    .configureHelp({
      showGlobalOptions: true,
      // gh style: the command list names commands; their arguments are in each command's help.
      subcommandTerm: (command) => [command.name(), ...command.aliases()].join(', '),
      // --version is not a global option: only the program's help lists it.
      visibleGlobalOptions(command) {
        return Help.prototype.visibleGlobalOptions
          .call(this, command)
          .filter((option) => option.long !== '--version');
      },
      // A command given only a summary says it under its usage line too, rather than nothing.
      commandDescription: (command) => command.description() || command.summary(),
    })
    .showSuggestionAfterError(true)
    .addHelpText(
      'after',
      `${examples(
        'convene space create "Release plan" --ttl 2h',
        'convene invite',
        'convene join "http://localhost:3000/join/…#key=…" --name Ada --human',
        'convene send "Draft is ready for review"',
        'convene tail',
      )}
Environment:
  CONVENE_URL     the server (same as --url)
  CONVENE_TOKEN   a usr_ token linking what you create or join to your dashboard
  NO_COLOR        no colours or spinners (prompts stay, without colour)
  CI, AI_AGENT    plain text: no colours, spinners or prompts

Exit codes: 0 ok, 1 error, 2 usage, 4 authentication needed, 5 not found, 6 locked, conflict or
rate-limited (try again later), 130 interrupted (129 and 143: stopped by SIGHUP or SIGTERM);
\`tail\` and \`inbox --follow\` end with 0 on Ctrl-C.
Keys and tokens are kept in $XDG_CONFIG_HOME/convene/credentials.json (mode 0600).
`,
    );

  program.commandsGroup('Spaces and messages:');
  registerSpace(program, app);
  registerInvite(program, app);
  registerJoin(program, app);
  registerParticipants(program, app);
  registerModeration(program, app);
  registerLeave(program, app);
  registerSend(program, app);
  registerMessages(program, app);
  registerInbox(program, app);
  registerWebhook(program, app);
  registerTail(program, app);
  registerArtifact(program, app);
  program.commandsGroup('Account:');
  registerLogin(program, app);
  registerSignup(program, app);
  registerLogout(program, app);
  registerWhoami(program, app);
  registerToken(program, app);
  program.commandsGroup('Server and tools:');
  registerServe(program, app);
  registerAsk(program, app);
  registerMcp(program, app);
  registerDoctor(program, app);
  registerCompletion(program, app);
  registerComplete(program, app);
  program.commandsGroup('Help:');
  registerVersion(program, app);
  for (const group of walk(program).filter((command) => command.commands.length > 0)) {
    const path = commandPath(group);
    addHelpCommand(group).addHelpText(
      'after',
      group === program
        ? examples('convene help send', 'convene help space create')
        : examples(`${path} help ${group.commands[0]!.name()}`),
    );
  }

  for (const command of walk(program)) {
    const group = command !== program && command.commands.length > 0;
    command.exitOverride((error) => {
      // A group named without one of its commands (`convene space`): commander shows its help on
      // stderr as an error (exit code 1, "commander.help"), which is a usage error here. The bare
      // program keeps its help as an answer, and so does help asked for.
      if (error.code === 'commander.help' && error.exitCode !== 0 && group) {
        // With --json, stderr takes JSON lines only: the error names the commands, not the help.
        if (options.jsonErrors) process.stderr.write(missingCommand(command));
        throw new CommanderError(ExitCode.usage, 'convene.missingCommand', error.message);
      }
      throw error;
    });
    command.configureOutput({
      // Straight to stderr: writeErr, which commander passes here, is silenced below.
      outputError: (message) => process.stderr.write(formatCommanderError(message, command, options)),
      // Help shown as an error goes to stderr through writeErr: not JSON lines, so not with --json.
      ...(group && options.jsonErrors ? { writeErr: () => {} } : {}),
    });
  }
  // `-file` where `--file` was meant: commander reads it as `-f ile`, the short option and a value
  // (`artifact write plan.md -file` wrote a file named `ile`, if there was one). A word of one dash
  // that spells a long option of the command is that option mistyped: refused, saying which.
  program.hook('preAction', (_program, action) => {
    const words = options.args ?? [];
    const end = words.indexOf('--');
    const known = optionsOf(action as Command);
    for (const [i, word] of (end < 0 ? words : words.slice(0, end)).entries()) {
      if (!spelledLong(known, word)) continue;
      // The value of an option before it (`--name -json`) is a value.
      const before = known.find((o) => o.long === words[i - 1] || o.short === words[i - 1]);
      if (before?.required || before?.optional) continue;
      action.error(`error: unknown option '${word}'`, {
        exitCode: ExitCode.usage,
        code: 'commander.unknownOption',
      });
    }
  });
  return program;
}

/**
 * `help [command…]` of the program and of each group (`convene space help create`): our own rather
 * than commander's, which answers a name it does not know with the group's help as if it were
 * asked for (the general help and exit 0 for the program; `space help nosuch` printed space's help
 * with nothing said), and reads only the first word (`help space create` was space's help).
 */
function addHelpCommand(group: Command) {
  return group
    .command('help')
    .argument('[command...]', 'a command, or a group and one of its commands')
    .usage('[COMMAND...]')
    .summary('show help for a command')
    .description('Show the help of a command, as its --help does: `help send`, `help space create`.')
    .action((words) => {
      helpFor(group, words).help();
    });
}

/**
 * The command `convene help WORDS…` names, by name or alias, word by word. A word that names no
 * command is a usage error naming it, with the nearest name, as commander answers `convene sned`.
 */
function helpFor(program: Command, words: readonly string[]): Command {
  let command = program;
  for (const word of words) {
    const names = (c: Command) => [c.name(), ...c.aliases()];
    const sub = command.commands.find((c) => names(c as Command).includes(word));
    if (!sub) {
      const near = didYouMean(word, command);
      throw new UsageError(
        `unknown command '${word}'`,
        `${near ? `${near} ` : ''}Run \`${commandPath(command)} --help\` for usage.`,
      );
    }
    command = sub as Command;
  }
  return command;
}

/**
 * Words other tools use for what a command of convene's does: typed as a command, they are
 * answered with the command meant (and what it does), as a typo is with the nearest name.
 */
const SYNONYMS: Record<string, string> = {
  watch: 'Did you mean tail? `convene tail` follows a space live.',
  follow: 'Did you mean tail? `convene tail` follows a space live.',
  stream: 'Did you mean tail? `convene tail` follows a space live.',
  history:
    'Did you mean messages? `convene messages` lists a space’s messages; `convene artifact history ARTIFACT` a document’s versions.',
  chat: 'Did you mean send? `convene send TEXT` sends a message.',
  say: 'Did you mean send? `convene send TEXT` sends a message.',
  ban: 'Did you mean kick? `convene kick PARTICIPANT` removes a participant (owner).',
  remove: 'Did you mean kick? `convene kick PARTICIPANT` removes a participant (owner).',
  members: 'Did you mean participants? `convene participants` lists who is in a space.',
  users: 'Did you mean participants? `convene participants` lists who is in a space.',
  // Under a command: its path after `convene`, then the word.
  'space delete': 'Did you mean close? `convene space close SPACE` closes a space for good (owner).',
  'space remove': 'Did you mean close? `convene space close SPACE` closes a space for good (owner).',
  'space switch': 'Did you mean use? `convene space use SPACE` makes it the default.',
  'space select': 'Did you mean use? `convene space use SPACE` makes it the default.',
  'artifact cat': 'Did you mean show? `convene artifact show ARTIFACT` prints a document.',
  'artifact read': 'Did you mean show? `convene artifact show ARTIFACT` prints a document.',
  'artifact export': 'Did you mean download? `convene artifact download ARTIFACT` writes its markdown.',
  'artifact save':
    'Did you mean write? `convene artifact write ARTIFACT` saves a file or stdin as the next version.',
  'artifact rename':
    'Documents keep the name they were created with: `convene artifact create NAME` makes another.',
  'artifact delete': 'Documents are kept with their history for as long as the space: there is no delete.',
  'artifact remove': 'Documents are kept with their history for as long as the space: there is no delete.',
  'artifact rm': 'Documents are kept with their history for as long as the space: there is no delete.',
  'space rm': 'Did you mean close? `convene space close SPACE` closes a space for good (owner).',
  'webhook delete': 'Did you mean remove? `convene webhook remove ID` deletes a webhook.',
  'token delete': 'Did you mean revoke? `convene token revoke TOKEN` revokes a token.',
  'token remove': 'Did you mean revoke? `convene token revoke TOKEN` revokes a token.',
};

/**
 * What an unknown command `word` under `command` may have meant: a word of other tools for one of
 * the program's (`watch`: tail), else the nearest name (`sned`: send), else nothing.
 */
function didYouMean(word: string, command: Command): string | undefined {
  const under = commandPath(command).split(' ').slice(1).join(' ');
  const synonym = SYNONYMS[`${under ? `${under} ` : ''}${word.toLowerCase()}`];
  if (synonym) return synonym;
  const near = closest(
    word,
    command.commands.flatMap((c) => [c.name(), ...c.aliases()]),
  );
  return near ? `Did you mean ${near}?` : undefined;
}

/** Every command of the tree, the program first. */
export function walk(command: Command): Command[] {
  return [command, ...command.commands.flatMap((sub) => walk(sub as Command))];
}

/**
 * Where `-v`/`--version` is on a command line: before any command (convene's own, the version),
 * after a command's name (not an option of the command), or nowhere. Values of `--url`, the one
 * program option that takes one, are not command names; nothing after `--` is an option.
 */
function versionFlag(args: readonly string[]): 'program' | 'command' | undefined {
  let command = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') break;
    if (arg === '-v' || arg === '--version') return command ? 'command' : 'program';
    if (arg === '--url') i++;
    else if (!arg.startsWith('-')) command = true;
  }
  return undefined;
}

function formatCommanderError(
  message: string,
  command: Command,
  { jsonErrors: json = false, args = [] }: { jsonErrors?: boolean; args?: readonly string[] },
): string {
  let [said = '', ...rest] = message
    .replace(/^error: /, '')
    .trimEnd()
    .split('\n');
  const text = inOurWords(said, command);
  const unknown = /^unknown command '(.*)'$/.exec(said)?.[1];
  if (unknown !== undefined) {
    // Commander suggests the name fewest edits away (`hist`: list); ours prefers what it starts,
    // and knows the words of other tools (`watch`: tail).
    const near = didYouMean(unknown, command);
    rest = near ? [`(${near})`] : [];
  }
  // `-json`, `-at 2` (one dash, as Go's flags take them): an option of the command, mistyped;
  // commander may have read the first letter as a short flag (`-quiet`: -q, then `-uiet` unknown).
  const unknownOption = /^unknown option '(-[^-].*)'$/s.exec(said)?.[1];
  const known = optionsOf(command);
  const oneDash = unknownOption
    ? args
        .map((word) => (word.endsWith(unknownOption.slice(1)) ? spelledLong(known, word) : undefined))
        .find(Boolean)
    : undefined;
  if (/^unknown option '(-v|--version)'$/.test(said)) rest = [`(${versionHint(command)})`];
  else if (oneDash) rest = [`(Did you mean ${oneDash}?)`];
  else if (rest.length === 0 && command.registeredArguments.length > 0) {
    const dashed = textAfterDashes(said, args, command);
    if (dashed) rest = [`(${dashed})`];
  }
  if (/^too many arguments\b/.test(said)) {
    const moved = optionsBeforeDashes(command, args);
    if (moved) rest = [`(${moved})`];
  }
  const help = `Run \`${commandPath(command)} --help\` for usage.`;
  if (json) {
    // "(Did you mean send?)" and the like become the hint, before the pointer to the help.
    // Each a sentence: a hint that ends on a command line in backquotes gets its full stop.
    const hint = [...rest.map((line) => line.replace(/^\((.*)\)$/s, '$1').replace(/`$/, '`.')), help].join(
      ' ',
    );
    return `${toJson({ error: text, hint, exitCode: ExitCode.usage })}\n`;
  }
  // Colours as for any output, decided on stderr, where this goes.
  const { color: colored } = detectMode({}, process.env, {
    stdin: {},
    stdout: process.stderr,
    stderr: process.stderr,
  });
  const color = pc.createColors(colored);
  // Commander quotes what was typed (`unknown option '--…'`): a pasted name may hold escapes.
  return `${color.red('✗')} ${neutralise([text, ...rest].join('\n'))}\n${color.dim(help)}\n`;
}

/** A group named without one of its commands, with --json: the JSON line of a usage error. */
function missingCommand(group: Command): string {
  const names = group.commands.map((c) => c.name()).filter((name) => name !== 'help');
  return `${toJson({
    error: `${commandPath(group)} needs a command: ${listed(names)}`,
    hint: `Run \`${commandPath(group)} --help\` for usage.`,
    exitCode: ExitCode.usage,
  })}\n`;
}

/**
 * `convene send "-5 degrees outside"`, `convene artifact create -draft.md`: commander takes an
 * argument that starts with `-` for an option it does not know. Where it suggests no option
 * (`--fiel`: --file), the argument was likelier meant: the same command line with it after `--`,
 * which ends the options, and the options that followed it moved before `--` (after it they would
 * be arguments too). Any command that takes arguments gets it, not only `send`: a document may be
 * named `-draft.md`.
 */
function textAfterDashes(said: string, args: readonly string[], command: Command): string | undefined {
  const text = /^unknown option '(.*)'$/s.exec(said)?.[1];
  // `--bogus`, `--colour=never`, `-x`: a mistyped option, not a text. Suggesting it as the text
  // would send it, with another argument taken for the space.
  if (text === undefined || /^(--[a-z][a-z0-9-]*(=\S*)?|-[a-z])$/i.test(text)) return undefined;
  const at = args.indexOf(text);
  if (at < 0) return undefined;
  const { options, positionals } = sortWords(command, args.slice(at + 1));
  const before = [...args.slice(0, at), ...options].map(shellWord).join(' ');
  const after = [text, ...positionals].map(quoted).join(' ');
  return `${dashedNoun(command)} that starts with "-" goes after --, which ends the options: \`convene ${before} -- ${after}\``;
}

/** What the arguments of a command are, to a person: a message's text, or a name (of a document…). */
function dashedNoun(command: Command): string {
  const first = command.registeredArguments[0]?.name();
  if (first === 'space-and-text' || first === 'question') return 'A text';
  if (first === 'artifact' || first === 'name' || first === 'participant' || first === 'space')
    return 'A name';
  return 'An argument';
}

/**
 * The words of a command line sorted into the options of the command (and of the program: --json,
 * --url), each with its value, and the other words, each list in its order.
 */
function sortWords(command: Command, words: readonly string[]): { options: string[]; positionals: string[] } {
  const known = optionsOf(command);
  const options: string[] = [];
  const positionals: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    const flag = word.startsWith('--') ? word.split('=')[0]! : word;
    const option = known.find((o) => o.long === flag || o.short === flag);
    if (!option) positionals.push(word);
    else {
      options.push(word);
      // Its value, unless given with `=`.
      if (option.required && !word.includes('=') && i + 1 < words.length) options.push(words[++i]!);
    }
  }
  return { options, positionals };
}

/** The long option a word of one dash spells (`-file`: `--file`), if the command has it. */
function spelledLong(known: readonly Option[], word: string): string | undefined {
  const long = /^-[a-z][a-z0-9-]+$/i.test(word) ? `-${word}` : undefined;
  return long && known.some((o) => o.long === long) ? long : undefined;
}

/** The options a command takes: its own and its parents' (the program's --json, --url). */
function optionsOf(command: Command): Option[] {
  const known: Option[] = [];
  for (let c: Command | null = command; c; c = c.parent as Command | null) known.push(...c.options);
  return known;
}

/**
 * `convene artifact create -- "-draft.md" --file plan.md`: after `--` every word is an argument,
 * so commander counts `--file` and `plan.md` as two more ("too many arguments"). When words
 * after `--` are options of the command, the same line with them before `--`.
 */
function optionsBeforeDashes(command: Command, args: readonly string[]): string | undefined {
  const end = args.indexOf('--');
  if (end < 0) return undefined;
  const { options, positionals } = sortWords(command, args.slice(end + 1));
  if (options.length === 0) return undefined;
  const before = [...args.slice(0, end), ...options].map(shellWord).join(' ');
  return `Options go before --: after it every word is an argument, options too. \`convene ${before} -- ${positionals.map(quoted).join(' ')}\``;
}

/**
 * What someone who wrote --version under a command may have meant: a document's version, for the
 * artifact commands, and in any case convene's own version, asked for before any command.
 */
function versionHint(command: Command): string {
  const own = 'convene’s own version: `convene --version`';
  if (!commandPath(command).startsWith('convene artifact')) return `This command takes no --version; ${own}.`;
  return `A document’s versions: \`artifact show NAME --at N\` (or \`download\`) reads one, \`artifact history NAME\` lists them, \`artifact diff NAME A B\` compares two; ${own}.`;
}

/**
 * Commander's first line of a usage error, said as convene says things: a value not among the
 * choices, too many arguments, and "missing required argument 'shell'" of an argument with choices
 * ending with them (": bash, zsh or fish").
 */
function inOurWords(text: string, command: Command): string {
  // The completion's own command (hidden, run by the shell) keeps commander's words.
  if (command.name() === '__complete') return text;
  // Commander's words for a value that is not among the choices, said as ours: what was given, and
  // what may be (`unknown shell 'powershell': bash, zsh or fish`).
  const invalid =
    /^command-argument value '(.*)' is invalid for argument '([^']+)'\. Allowed choices are .*\.$/s.exec(
      text,
    ) ??
    /^option '(?:-\w, )?(--[\w-]+)[^']*' argument '(.*)' is invalid\. Allowed choices are .*\.$/.exec(text);
  if (invalid) {
    const argument = text.startsWith('option');
    const [given, name] = argument ? [invalid[2]!, invalid[1]!] : [invalid[1]!, invalid[2]!];
    const choices = argument
      ? command.options.find((option) => option.long === name)?.argChoices
      : command.registeredArguments.find((a) => a.name() === name)?.argChoices;
    if (choices?.length) return `unknown ${name} '${given}': ${listed(choices)}`;
  }
  // `too many arguments for 'diff'. Expected 3 arguments but got 4.`: with the arguments it takes
  // (no command line in backquotes: a hint may follow with the one to run).
  const many = /^too many arguments for '[^']+'\. Expected \d+ arguments? but got (\d+)\.$/.exec(text);
  if (many) {
    const { registeredArguments: taken } = command;
    const named = commandPath(command);
    if (taken.length === 0) return `too many arguments: ${named} takes none, not ${many[1]}`;
    const names = taken.map((a) => a.name().toUpperCase()).join(' ');
    const most = taken.every((a) => a.required) ? '' : 'at most ';
    return `too many arguments: ${named} takes ${most}${taken.length} (${names}), not ${many[1]}`;
  }
  const name = /^missing required argument '([^']+)'$/.exec(text)?.[1];
  const choices = command.registeredArguments.find((argument) => argument.name() === name)?.argChoices;
  if (!choices?.length) return text;
  return `${text}: ${listed(choices)}`;
}

/**
 * Runs one command line and returns its exit code. Ctrl-C (or SIGTERM, or SIGHUP: the terminal
 * closed) aborts what is running: commands that finish cleanly on it (tail, edit, waits) do so;
 * anything else ends at once, saying so when a change it sent is out (it may have been made).
 * Either way the exit code is the signal's, 130 (143, 129), so that
 * a script or a supervisor can tell a stop from an end.
 */
export async function run(argv: string[]): Promise<number> {
  const controller = new AbortController();
  const app = createApp(controller.signal);
  let interrupted: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    // The server stops itself cleanly on SIGINT, SIGTERM and SIGHUP once it is up; before then
    // (a database being migrated), a signal ends the run at once, as any command's.
    const ctx = app.current();
    if (ctx?.serverOwnsSignals) return;
    if (signal === 'SIGINT' && ctx?.editorOwnsInterrupt) return;
    // A closed terminal hangs up twice: the kernel signals the foreground group, and the shell
    // passes its own SIGHUP on to its jobs. The second is the same hangup, not someone insisting:
    // it must not cut short what the first is finishing (an edit keeping its text, its lock released).
    if (signal === 'SIGHUP' && interrupted === 'SIGHUP') return;
    if (interrupted || !ctx?.handlesInterrupt) {
      // A change out (`space close`, `mute`) is said, as it may have been made; a read ends silently.
      const change = interrupted || !ctx ? undefined : interruptedChange(ctx, signal);
      if (change) report(ctx!, change);
      exitWith(signalExitCode(signal));
    }
    interrupted = signal;
    controller.abort(new Error(signal));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // A closed terminal: what SIGTERM does, so that an open edit keeps its text and its lock goes.
  process.on('SIGHUP', onSignal);

  // Known before parsing, so that parse errors are JSON too when --json was asked for.
  const args = argv.slice(2);
  const end = args.indexOf('--');
  const program = buildProgram(app, {
    jsonErrors: (end < 0 ? args : args.slice(0, end)).includes('--json'),
    version: versionFlag(args) !== 'command',
    args,
  });
  try {
    // Named alone, convene answers with its help as --help does, on stdout (commander would
    // write it to stderr, as the error of a missing command): `convene | less` shows it.
    if (args.length === 0) {
      program.outputHelp();
      return ExitCode.ok;
    }
    await program.parseAsync(argv);
    return ExitCode.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help, --version, and the program named alone (its help is shown): not failures.
      if (
        error.code === 'commander.helpDisplayed' ||
        error.code === 'commander.version' ||
        error.code === 'commander.help' ||
        error.code === 'commander.executeSubCommandAsync'
      ) {
        return ExitCode.ok;
      }
      return ExitCode.usage;
    }
    const ctx = app.current() ?? new Context(program.opts(), controller.signal);
    // Nothing saved for this server: a server that does not answer is the problem to report.
    const down = error instanceof NoSpaceSavedError ? await ctx.unreachable() : undefined;
    const failure = explain(down ?? error, ctx);
    report(ctx, failure);
    return failure.exitCode;
  }
}

function report(ctx: Context, failure: CliError): void {
  // Stopped by a signal and ended cleanly: the exit code says it all.
  if (failure instanceof Stopped) return;
  if (failure instanceof Reported) {
    process.stderr.write(`${failure.line}\n`);
    return;
  }
  if (ctx.out.mode.json) {
    // The server did what was asked: its answer, the key in it, as a success would print it.
    if (failure instanceof KeyNotSavedError) process.stdout.write(`${toJson(failure.answer)}\n`);
    process.stderr.write(
      `${toJson({ error: failure.message, ...serverFields(failure.cause), ...failure.details, ...(failure.hint ? { hint: failure.hint } : {}), exitCode: failure.exitCode })}\n`,
    );
    return;
  }
  ctx.out.error(failure.message, failure.hint);
}
