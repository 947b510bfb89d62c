import { type Command, InvalidArgumentError } from '@commander-js/extra-typings';
import { BadRequestError, type CreateWebhookParams } from '@convene/sdk';
import { type App, examples } from '../app';
import { type Context, isLoopback, isUuid } from '../lib/context';
import { CliError } from '../lib/errors';
import { ExitCode } from '../lib/exit-codes';
import { serveCommand, serverWords } from '../lib/failure';
import { verbatim } from '../lib/quote';
import { relative } from '../lib/render';
import { byIdStart, closest } from '../lib/resolve';
import { suggest } from '../lib/suggest';

type EventType = NonNullable<CreateWebhookParams['events']>[number];

/** The types `--event` takes: the SDK's, each once (`satisfies` holds the list to its type). */
const EVENT_TYPES = Object.keys({
  message: 0,
  mention: 0,
  'participant-status': 0,
  'artifact-created': 0,
  'artifact-updated': 0,
  'artifact-locked': 0,
  'artifact-unlocked': 0,
  'space-closed': 0,
  'webhook-disabled': 0,
} satisfies Record<EventType, 0>) as EventType[];

/** One --event more, refused here with the valid names rather than by the server's validation. */
function eventType(value: string, previous: EventType[] = []): EventType[] {
  const type = EVENT_TYPES.find((t) => t === value);
  if (!type) {
    const near = closest(value, EVENT_TYPES);
    throw new InvalidArgumentError(
      `${near ? `Did you mean ${near}? ` : ''}The event types are ${EVENT_TYPES.join(', ')}.`,
    );
  }
  return [...previous, type];
}

/**
 * A URL refused for its address (loopback, private, link-local; code `webhook_address_private`):
 * a setting of the server, not a mistake on this command line, so the hint names it rather than
 * `webhook add --help`.
 */
function privateRefused(ctx: Context, error: unknown): CliError | undefined {
  if (!(error instanceof BadRequestError) || error.code !== 'webhook_address_private') return undefined;
  // On this machine, the server is one the user starts, and can start again so: on its own port
  // and data, or it would be another server, without the spaces (as the hint of one down says).
  const url = new URL(ctx.server);
  const serve = `WEBHOOK_ALLOW_PRIVATE=true ${serveCommand(url)}`;
  return new CliError(serverWords(error), {
    exitCode: ExitCode.usage,
    hint: `${ctx.server} refuses webhooks to loopback, private and link-local addresses unless it runs with WEBHOOK_ALLOW_PRIVATE=true (or lists the network in WEBHOOK_ALLOW_NETWORKS). ${
      isLoopback(url.hostname)
        ? `For a receiver on this machine or network, start it again so, as it was started: \`${serve}\` (with its --data-dir or --database-url again, if it was given one: on other data it would be a new server, without your spaces).`
        : 'Ask its operator to allow it, or give a public URL.'
    }`,
    details: { status: error.status },
    cause: error,
  });
}

/** Whether two webhook URLs are the same address (`HTTPS://Host/x` is `https://host/x`). */
function sameUrl(a: string, b: string): boolean {
  try {
    return new URL(a).href === new URL(b).href;
  } catch {
    return a === b;
  }
}

/** `convene webhook add | list | remove`: the signed webhooks that push a space's events to you. */
export function registerWebhook(program: Command, app: App): void {
  const webhook = program
    .command('webhook')
    .summary('signed webhooks that push a space’s events to a URL: add, list, remove')
    .description(
      'A webhook POSTs each event of the space (or only the --event types) to your URL, but never ' +
        'your own messages, signed the Standard Webhooks way with a secret shown once by `add`; ' +
        'failed deliveries are retried for ' +
        'about 24 h, then dropped, and the webhook is disabled if nothing reached it since (at once ' +
        'if your URL answers 410). Loopback and private addresses are refused unless ' +
        'the server’s operator allows them.',
    )
    .usage('<command> [options]')
    .addHelpText(
      'after',
      examples(
        'convene webhook add https://example.com/hook --event mention',
        'convene webhook list',
        'convene webhook remove 0b6f2c1e',
      ),
    );

  webhook
    .command('add')
    .argument('<url>', 'an http: or https: URL to POST events to')
    .usage('URL [options]')
    .option('-s, --space <space>', 'name or id (default: the default space)')
    .option('-e, --event <type>', `deliver only this type (repeatable): ${EVENT_TYPES.join(', ')}`, eventType)
    .summary('register a webhook; prints its signing secret once')
    .description(
      'Register URL to receive the space’s events (all of them, or the --event types), signed. ' +
        'The signing secret is printed once, on standard output: keep it to verify deliveries. It ' +
        'is yours: it never receives your own messages, and stops when you leave or are removed. ' +
        'The server refuses loopback, private and link-local addresses (127.0.0.1, localhost, ' +
        '10.…, 192.168.…, fe80::…) unless it runs with WEBHOOK_ALLOW_PRIVATE=true (or lists the ' +
        'network in WEBHOOK_ALLOW_NETWORKS): for a receiver on your own machine, start it as ' +
        '`WEBHOOK_ALLOW_PRIVATE=true convene serve`.',
    )
    .addHelpText(
      'after',
      examples(
        'convene webhook add https://example.com/hook',
        'convene webhook add https://example.com/hook --event mention --event artifact-updated',
        'convene webhook add https://example.com/hook -q > webhook-secret',
      ),
    )
    .action(async (url, options, command) => {
      const ctx = app.context(command);
      const saved = ctx.space(options.space);
      const space = ctx.spaceClient(saved);
      const twin = (await space.webhooks.list()).webhooks.find(
        (w) => w.participantId === saved.participantId && w.enabled && sameUrl(w.url, url),
      );
      if (twin) {
        const remove = suggest(ctx, 'webhook remove', {
          args: [verbatim(twin.id.slice(0, 8))],
          space: saved,
        });
        throw new CliError(
          `you already have webhook ${twin.id} POSTing ${twin.events?.join(', ') ?? 'every event'} to ${twin.url}`,
          {
            exitCode: ExitCode.conflict,
            hint: `A second one would deliver its events twice. One webhook takes several --event; to change them, or for a new secret, remove it first: \`${remove}\`, then add it again.`,
            details: { id: twin.id },
          },
        );
      }
      const created = await space.webhooks
        .create({
          url,
          ...(options.event ? { events: options.event } : {}),
        })
        .catch((error: unknown) => {
          throw privateRefused(ctx, error) ?? error;
        });
      const { out } = ctx;
      out.result(created, {
        quiet: () => created.secret,
        human: () => {
          out.success(
            `Webhook ${created.id} will POST ${created.events?.join(', ') ?? 'every event'} to ${url}`,
          );
          // Data on standard output, as token create's token: `webhook add URL > secret` keeps it.
          out.line(created.secret);
          out.hint('The signing secret, shown this once: verify each delivery with it.');
        },
      });
    });

  webhook
    .command('list')
    .alias('ls')
    .option('-s, --space <space>', 'name or id (default: the default space)')
    .summary('your webhooks in a space (the owner sees everyone’s), never their secrets')
    .description(
      'List your webhooks in a space (the owner sees everyone’s): id, URL, event types, and ' +
        'whether deliveries succeed, fail or gave up (disabled). Secrets are never shown again.',
    )
    .addHelpText('after', examples('convene webhook list', 'convene webhook list --json'))
    .action(async (options, command) => {
      const ctx = app.context(command);
      const { webhooks } = await ctx.spaceClient(ctx.space(options.space)).webhooks.list();
      const { out } = ctx;
      out.result(webhooks, {
        quiet: () => webhooks.map((w) => w.id).join('\n') || undefined,
        human: () =>
          out.table(
            webhooks,
            [
              { header: 'id', value: (w) => w.id, id: true },
              { header: 'url', value: (w) => w.url, style: (s) => out.c.bold(s) },
              { header: 'events', value: (w) => w.events?.join(',') ?? 'all' },
              { header: 'created', value: (w) => relative(w.createdAt) },
              {
                header: 'state',
                value: (w) =>
                  !w.enabled ? 'disabled' : w.failures ? `failing (${w.lastError ?? w.failures})` : 'enabled',
                style: (s, w) => (w.enabled && !w.failures ? out.c.green(s) : out.c.yellow(s)),
              },
            ],
            `No webhooks yet: \`${suggest(ctx, 'webhook add', { args: [verbatim('URL')] })}\`.`,
          ),
      });
    });

  webhook
    .command('remove')
    .alias('rm')
    .usage('ID [options]')
    .argument(
      '<id>',
      'the webhook’s id or the start of it, 4 characters or more (see `convene webhook list`)',
    )
    .option('-s, --space <space>', 'name or id (default: the default space)')
    .summary('delete a webhook and the deliveries still queued for it')
    .description(
      'Delete a webhook, by its id or the start of it, and drop the deliveries still queued for it.',
    )
    .addHelpText('after', examples('convene webhook remove 0b6f2c1e', 'convene webhook rm 0b6f'))
    .action(async (reference, options, command) => {
      const ctx = app.context(command);
      const space = ctx.spaceClient(ctx.space(options.space));
      // A whole id goes as it is (the server says when it names no webhook); a start is looked up
      // among the webhooks this key sees, as `list` shows them.
      const id = isUuid(reference)
        ? reference
        : byIdStart((await space.webhooks.list()).webhooks, reference, {
            noun: 'webhook',
            id: (w) => w.id,
            label: (w) => `${w.id} (${w.url})`,
            listCommand: suggest(ctx, 'webhook list'),
          }).id;
      await space.webhooks.delete(id);
      ctx.out.result(
        { id, deleted: true },
        { quiet: () => id, human: () => ctx.out.success(`Removed webhook ${id}`) },
      );
    });
}
