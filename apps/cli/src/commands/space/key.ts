import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../../app';
import { spaceNamed } from '../../lib/input';

export function registerSpaceKey(space: Command, app: App): void {
  space
    .command('key')
    .argument('[space]', 'name or id (default: the default space)')
    .option('-s, --space <space>', 'name or id, as SPACE')
    .usage('[SPACE] [options]')
    .summary('print the owner or participant key saved for a space (for the SDK, REST, MCP)')
    .description(
      'Print the key convene keeps for a space, owner or participant, alone on stdout: to hand the ' +
        'seat to an agent or a script (the SDK, a REST call, an MCP host), as `gh auth token` does. ' +
        'Whoever holds it acts as you in the space: pass it in an environment variable, never in a ' +
        'file under version control. The server is not asked (`convene space show` checks it ' +
        'works); `convene space use ID --key -` saves a key on another machine.',
    )
    .addHelpText(
      'after',
      examples(
        'CONVENE_SPACE_KEY=$(convene space key) node agent.mjs',
        'convene space key "Release plan" --json',
        'convene space key | ssh build-box convene space use 3f2e1c0a-… --key -',
      ),
    )
    .action((argument, options, command) => {
      const ctx = app.context(command);
      const saved = ctx.space(spaceNamed(ctx, argument, options.space, 'convene space key'));
      ctx.out.result(
        {
          spaceId: saved.spaceId,
          name: saved.name,
          role: saved.role,
          participantId: saved.participantId,
          key: saved.key,
          url: ctx.url,
        },
        { quiet: () => saved.key, human: () => ctx.out.line(saved.key) },
      );
    });
}
