import type { Command } from '@commander-js/extra-typings';
import type { InboxFollow } from '@convene/sdk';
import { type App, examples } from '../app';
import { stopFollowing, UsageError } from '../lib/errors';
import { awayHint, removedFrom } from '../lib/failure';
import { parseWait, spaceNamed } from '../lib/input';
import { sayConnectionLost, waitingForStart } from '../lib/outage';
import { count, followEnded } from '../lib/output';
import { printMessage } from '../lib/render';

export function registerInbox(program: Command, app: App): void {
  program
    .command('inbox')
    .argument('[space]', 'name or id (default: the default space)')
    .option('-s, --space <space>', 'name or id, as SPACE')
    .usage('[SPACE] [options]')
    .summary('what mentions you or replies to you, since you last acknowledged')
    .description(
      'Print the messages that mention you (@Name included) or reply to one of yours, after your ' +
        'read position, which the server keeps. --ack moves the position past what was printed, ' +
        'so the next run (on any machine) starts after it. --wait waits up to that many seconds ' +
        'for something when nothing is there. --follow keeps printing each new one as it comes ' +
        '(each of its reads waits --wait seconds, 1 to 60, 30 by default, before it asks again) ' +
        'and acknowledges it once printed; a server that stops answering is waited for, and so is one that does ' +
        'not answer yet when it starts, said on stderr as `tail` says it. ' +
        'Ctrl-C stops it (exit 0), SIGTERM or SIGHUP too (exit 143 or 129). ' +
        'As `tail`, it ends with exit 0 when the space closes (or expires) or you leave it elsewhere, ' +
        'and with exit 4 when you are removed. ' +
        'With --json: the API’s answer, ' +
        'or with --follow one message per line, and, when the space ends it by itself, a last line ' +
        'on stderr, {"ended": "closed"|"expired"|"left", "message"}, as `tail --json` has.',
    )
    .option('--ack', 'acknowledge what was printed')
    .option(
      '--wait <seconds>',
      'wait up to this long for something new (at most 60; with --follow, each read, 1 to 60, 30 by default)',
    )
    .option('-f, --follow', 'keep printing new messages, acknowledging each')
    .addHelpText(
      'after',
      examples('convene inbox', 'convene inbox --ack', 'convene inbox --follow --json | jq -r .content'),
    )
    .action(async (argument, options, command) => {
      const ctx = app.context(command);
      const reference = spaceNamed(ctx, argument, options.space, 'convene inbox');
      const wait = parseWait(options.wait);
      // Following, --wait is how long each read waits before the next: none at all would ask the
      // server again and again without a pause (and run into its rate limit).
      if (options.follow && wait === 0)
        throw new UsageError(
          '--follow cannot take --wait 0: each read would end at once, and the next be asked without a pause',
          'Give --wait 1 to 60, how long each read waits for something before asking again (30 without --wait); Ctrl-C stops following.',
        );
      const saved = ctx.space(reference);
      // --follow runs until stopped: a long Retry-After is waited out, not a reason to end.
      const inbox = ctx.spaceClient(saved, { longLived: options.follow === true }).inbox;
      const { out } = ctx;

      if (options.follow) {
        ctx.handlesInterrupt = true;
        out.info(out.c.dim(`Following your inbox in ${saved.name} (Ctrl-C to stop)`));
        // Said on stderr as tail says it: a server that does not answer is not an empty inbox.
        const hooks = sayConnectionLost(out, { server: ctx.server, hint: awayHint(ctx) });
        // Started while the server does not answer: waited for as tail waits (the SDK throws a
        // first read's failure). Once the SDK's loop was answered, it rides outages out itself,
        // and says so through `hooks`: what it throws then is its last word.
        const start = waitingForStart(hooks, ctx.signal, ctx.server);
        let live = false;
        const open = () =>
          inbox.follow({
            signal: ctx.signal,
            ...(wait === undefined ? {} : { wait }),
            ...hooks,
            onDisconnect: (lost) => {
              live = true;
              hooks.onDisconnect?.(lost);
            },
          });
        let following: InboxFollow | undefined;
        try {
          for (let waited = false; ; ) {
            try {
              // Back after a wait: a read that does not wait says so (Reconnected) as soon as the
              // server answers, not when the next message ends a long poll.
              if (waited) {
                await inbox.get({ wait: 0 }, { signal: ctx.signal });
                start.connected();
              }
              following = open();
              for await (const message of following) {
                live = true;
                if (out.mode.json) out.jsonLine(message);
                else printMessage(out, message);
                // Acknowledged when the loop asks for the next one: only once it reached the reader.
                // A reader gone (`| head -1` exited) fails this, and the message stays unread.
                await out.delivered();
              }
              break;
            } catch (error) {
              if (live || !(await start.failed(error))) throw error;
              waited = true;
            }
          }
        } catch (error) {
          if (!ctx.signal.aborted) throw error;
        }
        // A signal is what ends following: Ctrl-C exit 0, SIGTERM and SIGHUP their codes, as `tail`
        // (what was printed but not yet delivered stays unacknowledged, for the next run).
        if (ctx.signal.aborted) stopFollowing(ctx.signal);
        // The SDK ends following quietly once the key is refused, and says why: as `tail` ends, the
        // space's closing (or expiry) and your leaving it elsewhere end it (exit 0, said on
        // stderr); being removed is exit 4 and what to do; a key refused for another reason is
        // this command's error, as it would be any command's.
        const ended = following?.ended;
        const name = JSON.stringify(ctx.latestName(saved));
        if (ended?.reason === 'closed' || ended?.reason === 'left') {
          const reason =
            ended.reason === 'left' ? 'left' : ended.error?.code === 'space_expired' ? 'expired' : 'closed';
          out.info(out.c.dim(followEnded(reason, name)));
          out.endedJson(reason, name);
          return;
        }
        if (ended?.reason === 'kicked') throw removedFrom(ctx, saved, ended.error);
        if (ended?.error) throw ended.error;
        return;
      }

      const page = await inbox.get(wait === undefined ? {} : { wait });
      const last = page.messages.at(-1);
      const acked = options.ack && last ? await inbox.ack(last.seq) : undefined;
      const result = acked ? { ...page, ...acked } : page;
      out.result(result, {
        quiet: () => page.messages.map((m) => m.id).join('\n') || undefined,
        human: () => {
          // Every count is of what came after your read position (moved by --ack only), the
          // space's too, your own messages included; with --ack, the counts of what was printed
          // and acknowledged (what the read found).
          const { unread } = page;
          const inSpace = `${count(unread.messages, 'message')} in the space since your read position`;
          if (page.messages.length === 0) {
            out.info(out.c.dim(`Nothing new for you${unread.messages > 0 ? ` (${inSpace})` : ''}.`));
            return;
          }
          for (const message of page.messages) printMessage(out, message);
          out.info(
            out.c.dim(
              // A message may both mention you and reply to you: counted in each, once in all.
              `${unread.inbox} unread for you (${count(unread.mentions, 'mention')}, ${count(unread.replies, 'reply', 'replies')}${unread.mentions + unread.replies > unread.inbox ? ': some are both' : ''}), ` +
                `of ${inSpace}${acked ? '; acknowledged' : ''}`,
            ),
          );
        },
      });
    });
}
