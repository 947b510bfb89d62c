import { userInfo } from 'node:os';
import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../app';
import { isUuid, normaliseUrl } from '../lib/context';
import { CliError, UsageError } from '../lib/errors';
import { required } from '../lib/prompts';

/** The server an invitation link points at: what comes before `/join/` or `/hub/space/`. */
export function serverOfLink(link: string): string | undefined {
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    return undefined;
  }
  const match = url.pathname.match(/^(.*?)\/(?:join|hub\/space)\/[^/]+/);
  if (!match) return undefined;
  return normaliseUrl(`${url.origin}${match[1]}`);
}

export function registerJoin(program: Command, app: App): void {
  program
    .command('join')
    .argument('[link-or-space]', 'an invitation link (humanLink or agentLink), or a space id with --key')
    .usage('LINK | SPACE --key KEY [options]')
    .summary('join a space with an invitation; waits through approval')
    .description(
      'Join a space with an invitation: its link (for people or for agents), or the space id and ' +
        'the invitation key. In a private space this waits until the owner approves you. The ' +
        'participant key is kept (0600) and the space becomes the default.',
    )
    .option('-k, --key <key>', 'the invitation key (with a space id)')
    .option('-n, --name <name>', 'your display name (default: asked, or your user name)')
    .option('-r, --role <role>', 'a free-text label, e.g. "reviewer"')
    .option('--human', 'join as a human (default: an agent)')
    .addHelpText(
      'after',
      examples(
        'convene join "http://localhost:3000/join/3f2e…#key=…" --name Ada --human',
        'convene join 3f2e… --key inv_… --name "Review bot" --role reviewer',
      ),
    )
    .action(async (target, options, command) => {
      const ctx = app.context(command);
      const { out } = ctx;
      const reference = await required(out, target, {
        message: 'Invitation link',
        usage: 'convene join LINK | SPACE --key KEY [options]',
      });
      const linkServer = serverOfLink(reference);
      if (!linkServer && !isUuid(reference)) {
        throw new UsageError(
          `"${reference}" is neither an invitation link nor a space id`,
          'Pass the link `convene invite` printed, or a space id with --key.',
        );
      }
      if (!linkServer && !options.key) {
        throw new UsageError(
          'joining by space id needs the invitation key',
          `convene join ${reference} --key KEY`,
        );
      }
      // A link names its server; --url or CONVENE_URL still win (a proxy, another address).
      const url = linkServer && !ctx.urlIsExplicit ? linkServer : ctx.url;
      const name =
        options.name ??
        (out.mode.interactive
          ? await required(out, undefined, {
              message: 'Your name in the space',
              initial: userInfo().username,
              usage: 'convene join LINK --name NAME',
            })
          : userInfo().username);
      const hub = ctx.hub(url);
      const profile = {
        name,
        ...(options.role !== undefined ? { role: options.role } : {}),
        isHuman: options.human === true,
      };
      ctx.handlesInterrupt = true;
      const spinner = out.spinner(`Joining as ${name}`);
      const joinOptions = { ...profile, signal: ctx.signal };
      let member: Awaited<ReturnType<typeof hub.join>>;
      try {
        member = linkServer
          ? await hub.join(reference, joinOptions)
          : await hub.join(reference, options.key!, joinOptions);
      } catch (error) {
        spinner.fail('Not joined');
        if (ctx.signal.aborted) {
          throw new CliError('stopped waiting for approval', {
            hint: 'The owner can still approve you; join again to wait for it.',
          });
        }
        throw error;
      }
      const key = member.key;
      const participantId = member.participantId!;
      const view = await member.get();
      if (url !== ctx.url) {
        // The link named another server: commands without --url use it from now on.
        ctx.store.update((file) => {
          file.url = url;
        });
      }
      ctx.saveSpace({ spaceId: view.spaceId, name: view.name, role: 'participant', key, participantId }, url);
      spinner.stop(`Joined ${out.c.bold(view.name)} as ${name}`);
      out.result(
        { spaceId: view.spaceId, participantId, participantPrivateKey: key },
        {
          quiet: () => participantId,
          human: () => {
            out.fields([
              ['space', `${view.name} (${view.spaceId})`],
              ['participant', participantId],
              ['server', url],
            ]);
            out.hint('This space is now your default: `convene send "hello"`, `convene tail`.');
          },
        },
      );
    });
}
