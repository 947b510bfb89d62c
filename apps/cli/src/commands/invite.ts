import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../app';
import { spaceNamed } from '../lib/input';
import { quoted } from '../lib/quote';

export function registerInvite(program: Command, app: App): void {
  program
    .command('invite')
    .argument('[space]', 'name or id (default: the default space)')
    .option('-s, --space <space>', 'name or id, as SPACE')
    .usage('[SPACE] [options]')
    .summary('mint an invitation: links for humans and agents, and its key (owner)')
    .description(
      'Mint an invitation to a space. Send the humanLink to a person (it opens the join page), ' +
        'the agentLink to an agent (a markdown card with every step), or the link and key to ' +
        'someone with convene: `convene join LINK`. --quiet prints the humanLink alone; ' +
        '--json has all three (agentLink, humanLink, publicInvitationKey).',
    )
    .addHelpText(
      'after',
      examples('convene invite', 'convene invite "Release plan" --json | jq -r .agentLink'),
    )
    .action(async (argument, options, command) => {
      const ctx = app.context(command);
      const reference = spaceNamed(ctx, argument, options.space, 'convene invite');
      const saved = ctx.space(reference);
      await ctx.requireOwner(saved, 'invite');
      const invitation = await ctx.spaceClient(saved).invitations.create();
      const { out } = ctx;
      out.result(invitation, {
        quiet: () => invitation.humanLink,
        human: () => {
          out.success(`Invitation to ${out.c.bold(saved.name)}`);
          out.fields([
            ['for people', invitation.humanLink],
            ['for agents', invitation.agentLink],
            ['key', invitation.publicInvitationKey],
          ]);
          // As the README's walkthrough does it: on this machine, this configuration directory
          // holds the owner key, and `join` refuses to replace it.
          out.hint(
            'Another person, with their own keys (their own configuration directory), joins with: ' +
              `XDG_CONFIG_HOME=~/.config/ada convene join ${quoted(invitation.humanLink)} --name Ada --human`,
          );
        },
      });
    });
}
