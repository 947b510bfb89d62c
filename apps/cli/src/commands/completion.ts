import { Argument, type Command } from '@commander-js/extra-typings';
import { type App, examples } from '../app';
import { bashScript, completionTree, fishScript, zshScript } from '../lib/completion';

const SCRIPTS = { bash: bashScript, zsh: zshScript, fish: fishScript } as const;

export function registerCompletion(program: Command, app: App): void {
  program
    .command('completion')
    .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh', 'fish'] as const))
    .usage('bash|zsh|fish')
    .summary('print the shell completion script')
    .description(
      'Print a script that completes convene’s commands and flags in your shell, and the names of the ' +
        'spaces convene holds keys for (read from its credential file: no request to the server).',
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
    .action(async (shell, _options, command) => {
      const ctx = app.context(command);
      let root = command as unknown as Command;
      while (root.parent) root = root.parent as Command;
      ctx.out.raw(SCRIPTS[shell](completionTree(root)));
    });
}
