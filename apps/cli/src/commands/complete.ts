import { Argument, type Command } from '@commander-js/extra-typings';
import { type App, examples } from '../app';
import { sameName } from '../lib/resolve';

/**
 * What the completion scripts ask for while a person types: the names of the spaces convene holds
 * keys for on the server in use, read from the credential file alone (no request: a completion
 * must answer at once, server or no server). Not listed in the help: scripts call it, not people.
 */
export function registerComplete(program: Command, app: App): void {
  program
    .command('__complete', { hidden: true })
    .addArgument(new Argument('<what>', 'what to complete').choices(['spaces'] as const))
    .description('Print the completions of a space argument, one a line (used by `convene completion`).')
    .addHelpText(
      'after',
      examples('convene __complete spaces', 'CONVENE_URL=http://localhost:8080 convene __complete spaces'),
    )
    .action(async (_what, _options, command) => {
      const ctx = app.context(command);
      const spaces = Object.values(ctx.host().spaces);
      const taken = (name: string) => spaces.filter((s) => sameName(s.name, name)).length;
      // A name two spaces share names neither (the commands refuse it): their ids complete instead.
      // A name with a newline cannot be typed as one word: its id too.
      const words = spaces.map((s) => (taken(s.name) > 1 || /[\r\n]/.test(s.name) ? s.spaceId : s.name));
      ctx.out.raw(
        words.length ? `${[...new Set(words)].sort((a, b) => a.localeCompare(b)).join('\n')}\n` : '',
      );
    });
}
