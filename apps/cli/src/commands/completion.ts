import { basename } from 'node:path';
import { Argument, type Command } from '@commander-js/extra-typings';
import { type App, examples } from '../app';
import { bashScript, completionTree, fishScript, zshScript } from '../lib/completion';
import { UsageError } from '../lib/errors';
import { choose } from '../lib/prompts';
import { listed } from '../lib/render';

const SCRIPTS = { bash: bashScript, zsh: zshScript, fish: fishScript } as const;
const SHELLS = ['bash', 'zsh', 'fish'] as const;
type Shell = (typeof SHELLS)[number];

/** Where each shell's script goes, said after it was printed to a terminal (picked from the list). */
const INSTALL: Record<Shell, string> = {
  bash: 'Add `source <(convene completion bash)` to ~/.bashrc',
  zsh: 'Add `source <(convene completion zsh)` to ~/.zshrc',
  fish: 'Save it with `convene completion fish > ~/.config/fish/completions/convene.fish`',
};

export function registerCompletion(program: Command, app: App): void {
  program
    .command('completion')
    .addArgument(new Argument('[shell]', 'the shell (picked from a list on a terminal)').choices(SHELLS))
    .usage('bash|zsh|fish')
    .summary('print the shell completion script')
    .description(
      'Print a script that completes convene’s commands and flags in your shell, and the names of the ' +
        'spaces convene holds keys for (read from its credential file: no request to the server). ' +
        'With no shell named, a terminal offers the shells to pick from (yours first); elsewhere it is a ' +
        'usage error.',
    )
    .addHelpText(
      'after',
      examples(
        '# bash: add to ~/.bashrc',
        'source <(convene completion bash)',
        '# zsh: add to ~/.zshrc',
        'source <(convene completion zsh)',
        '# fish',
        'convene completion fish > ~/.config/fish/completions/convene.fish',
      ),
    )
    .action(async (given, _options, command) => {
      const ctx = app.context(command);
      const shell = (await choose(ctx.out, given, {
        message: 'Which shell?',
        usage: 'convene completion bash|zsh|fish',
        items: SHELLS,
        id: (name) => name,
        label: (name) => name,
        initial: SHELLS.find((name) => name === basename(ctx.env.SHELL ?? '')),
        // Off a terminal, as commander says a missing argument of a command that does not ask.
        missing: () =>
          new UsageError(
            `missing required argument 'shell': ${listed(SHELLS)}`,
            'Run `convene completion --help` for usage.',
          ),
      })) as Shell;
      let root = command as unknown as Command;
      while (root.parent) root = root.parent as Command;
      ctx.out.raw(SCRIPTS[shell](completionTree(root)));
      // Picked from the list: the script went to the terminal, which is not where it is of use.
      if (given === undefined) ctx.out.hint(`${INSTALL[shell]}.`);
    });
}
