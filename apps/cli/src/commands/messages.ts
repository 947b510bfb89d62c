import { type Command, Option } from '@commander-js/extra-typings';
import type { Messages } from '@convene/sdk';
import { type App, examples } from '../app';
import { parseSince } from '../lib/duration';
import { parseCount, parseWait, spaceNamed } from '../lib/input';
import { type MessageLike, MessagesSeen, printMessage } from '../lib/render';

export function registerMessages(program: Command, app: App): void {
  program
    .command('messages')
    .alias('msgs')
    .argument('[space]', 'name or id (default: the default space)')
    .option('-s, --space <space>', 'name or id, as SPACE')
    .usage('[SPACE] [options]')
    .summary('read the messages of a space')
    .description(
      'Print the most recent messages of a space, oldest first: the time (and the date, when not ' +
        'today), the first 8 characters of its id (what `send --reply-to` takes), the sender and ' +
        'the text; a reply is followed by what it answers ' +
        '(`↪ in reply to Ada Lovelace: Question for you`, or `↪ in reply to message 3751a2b4` when that is older than ' +
        'what is listed). --since starts after an instant ' +
        '(a date-time, or a duration back from now), and lists every message after it; --limit ' +
        'keeps the last N (default 100 without --since; 0: all), and says on stderr how many ' +
        'earlier ones it left out. --wait ' +
        'waits up to that many seconds for a message when there is none yet (after --since, or at ' +
        'all), and prints it as soon as it comes.',
    )
    .option(
      '--since <time>',
      'only messages after this: 10m, 2h, 1d, 09:30, yesterday, 2030-01-01 12:00, 2030-01-01T12:00:00Z',
    )
    .addOption(
      // Not a commander default: --since changes it, and commander shows no default it does not set.
      new Option(
        '-n, --limit <n>',
        'at most this many, the most recent; 0: no limit (default: 100; with --since, no limit)',
      ),
    )
    .option('--wait <seconds>', 'when there is nothing yet, wait up to this long for a message (at most 60)')
    .addHelpText(
      'after',
      examples(
        'convene messages',
        'convene messages --since 1h',
        'convene messages --since 0s --wait 60',
        'convene messages "Release plan" --limit 0 --json | jq -r ".[].content"',
      ),
    )
    .action(async (argument, options, command) => {
      const ctx = app.context(command);
      const reference = spaceNamed(ctx, argument, options.space, 'convene messages');
      // After --since, every message: an archive by time must not lose the earlier ones.
      const limit =
        options.limit === undefined
          ? options.since === undefined
            ? 100
            : 0
          : parseCount(options.limit, '--limit', 'no limit');
      const since = options.since === undefined ? undefined : parseSince(options.since);
      const wait = parseWait(options.wait);
      const saved = ctx.space(reference);
      const kept: MessageLike[] = [];
      // Every message listed, shown or not: what a reply answers is named when it is among them.
      const seen = new MessagesSeen(Number.POSITIVE_INFINITY);
      let left = 0;
      for await (const message of listed(ctx.spaceClient(saved).messages, since, wait)) {
        kept.push(message);
        if (!ctx.out.mode.json) seen.add(message);
        if (limit > 0 && kept.length > limit) {
          kept.shift();
          left++;
        }
      }
      const { out } = ctx;
      // Said on stderr, so that a script's stdout holds the messages alone; to a script too (--json:
      // a `{"warning": …}` line), which would otherwise archive a cut list without knowing it.
      if (left > 0) {
        const said = `${left} earlier message${left === 1 ? '' : 's'} left out (--limit ${limit}): --limit 0 lists them all.`;
        if (out.mode.json) out.warn(said);
        else out.info(out.c.dim(said));
      }
      out.result(kept, {
        quiet: () => kept.map((m) => (m as { id?: string }).id).join('\n') || undefined,
        human: () => {
          if (kept.length === 0) out.info(out.c.dim(since ? 'No messages since then.' : 'No messages yet.'));
          for (const message of kept) printMessage(out, message, saved.participantId, seen);
        },
      });
    });
}

/**
 * The messages after `since`, every page of them. With `wait`, the first page waits for a
 * message when there is none yet; once one is there the rest are read without waiting (the SDK's
 * iteration would wait again after the last of them).
 */
async function* listed(messages: Messages, since: string | undefined, wait: number | undefined) {
  if (!wait) {
    yield* messages.list(since ? { since } : {});
    return;
  }
  const first = await messages.list({ ...(since ? { since } : {}), wait });
  yield* first.messages;
  if (first.messages.length > 0) yield* messages.list({ since: first.cursor });
}
