import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../app';
import { VERSION } from '../version';

/**
 * `convene version`: what `convene --version` prints, for those who type it as a command (as
 * `gh version`, `kubectl version` and `docker version` take it); `--json` as every command has it.
 */
export function registerVersion(program: Command, app: App): void {
  program
    .command('version')
    .summary('print the version of convene')
    .description('Print the version of convene, as `convene --version` does.')
    .addHelpText('after', examples('convene version', 'convene version --json'))
    .action((_options, command) => {
      const { out } = app.context(command);
      out.result({ version: VERSION }, { quiet: () => VERSION, human: () => out.line(VERSION) });
    });
}
