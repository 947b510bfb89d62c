import { randomUUID } from 'node:crypto';
import type { Command } from '@commander-js/extra-typings';
import { ConnectionError, ConveneError, limits, RateLimitError, type SpaceClient } from '@convene/sdk';
import { type App, examples } from '../app';
import { commandLine } from '../lib/command-line';
import type { Context } from '../lib/context';
import { isUuid } from '../lib/context';
import { CliError, UsageError } from '../lib/errors';
import { ExitCode } from '../lib/exit-codes';
import { explain, refusedForNow, serverWords } from '../lib/failure';
import { assertPiped, imageContent, readStdin, readTextFile, stdinIsPiped } from '../lib/input';
import { interruptible } from '../lib/interrupt';
import { canBeMentioned, type StrayMention, strayMentions } from '../lib/mentions';
import { inline } from '../lib/output';
import { required } from '../lib/prompts';
import { quoted, shellWord } from '../lib/quote';
import { listed } from '../lib/render';
import { byIdStart, closest, find, findExact, participantNaming, sameName } from '../lib/resolve';
import { suggest } from '../lib/suggest';

/**
 * What a message read from a file or stdin is read up to: a character is at most 4 bytes in UTF-8,
 * so past this it is too long whatever it holds (and a pipe that never ends is not read for ever).
 */
const MESSAGE_BYTES = limits.messageMax * 4;
const USAGE =
  'convene send [SPACE] TEXT | --file F | - [--space SPACE] [--html | --image URL|FILE] [--mention WHO]... [--reply-to ID] [--idempotency-key KEY]';

export function registerSend(program: Command, app: App): void {
  program
    .command('send')
    .argument('[space-and-text...]', 'the text (`-` reads stdin), after an optional space name or id')
    .usage(USAGE.replace(/^convene send /, ''))
    .summary('send a message')
    .description(
      'Send a message to a space (the default space unless one is named first, or with --space, ' +
        'as other commands name it). The text comes ' +
        'from the argument, a file (--file), or stdin (`-`, or with no text, what is piped or ' +
        'redirected into it); a text that starts with `-` goes ' +
        'after `--`, which ends the options. --html sends it as HTML (readers sanitise it); ' +
        '--image sends an image: an https: URL, a data:image/…;base64, URI, or a PNG, JPEG, GIF or ' +
        'WebP file (768 KiB at most), sent as a data: URI. An @ followed by a participant’s whole name (any ' +
        'case) mentions them, as --mention does; an @Word that names nobody is said on stderr. ' +
        'A message is 1 to 65,536 characters. A send whose answer was lost may have been sent: ' +
        'it says so, with the key to send it again under (--idempotency-key), which never posts ' +
        'it twice. A send the server’s rate limit refuses for a few ' +
        'seconds (5 at most) is made again after them; one refused for longer, as by the space’s ' +
        'message budget (each participant’s messages a minute, which its owner sets with `space ' +
        'update --max-messages-per-minute`), is not waited for: it fails at once, exit 6, saying ' +
        'when to try again.',
    )
    .option('-s, --space <space>', 'name or id (default: the default space)')
    .option('-f, --file <file>', 'send the content of a file')
    .option('--html', 'the text is HTML')
    .option(
      '--image <url|file>',
      'send an image: an https: URL, a data:image/…;base64, URI, or a PNG, JPEG, GIF or WebP file (768 KiB at most)',
    )
    .option(
      '-m, --mention <who>',
      'put it in a participant’s inbox: a name, the start of one (ada for Ada Lovelace) or a participantId (repeatable); @Name in the text works too, with the whole name',
      // No default, so the help shows none (commander prints an empty list as "default: []").
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option(
      '--reply-to <messageId>',
      'answer a message, by its id or the start of it, as `messages` shows it (its author sees it in their inbox)',
    )
    .option(
      '--idempotency-key <key>',
      `a key of your own for this send (1 to ${limits.idempotencyKeyMax} visible ASCII characters, unique to it): the same send again with the same key within 24 hours is answered as the first was, never posted twice`,
    )
    .addHelpText(
      'after',
      examples(
        'convene send "Draft is ready for review"',
        'convene send "Release plan" "Dates are fixed"',
        'convene send --space "Release plan" --file notes.md',
        'git log -5 --oneline | convene send -',
        'convene send --file notes.html --html',
        'convene send --image https://example.com/chart.png',
        'convene send --image ./chart.png',
        'convene send "Can you review?" --mention Ada',
        'convene send -- "-1 from me: not yet"',
        'convene send "Deploy finished" --idempotency-key deploy-2026-11-28',
      ),
    )
    .action(async (words, options, command) => {
      const ctx = app.context(command);
      if (options.html && options.image !== undefined) {
        throw new UsageError('--html and --image cannot be used together', `Usage: ${USAGE}`);
      }
      // The content comes from --image or --file, or else from the last word (or stdin).
      const source = options.image !== undefined ? 'image' : options.file !== undefined ? 'file' : undefined;
      // `send - --image URL`: `-` would name a space beside --image or --file, as any word there;
      // it is likelier meant as the message, which those give already.
      if (source && words.at(-1) === '-') {
        throw new UsageError(
          `\`-\` (the message from stdin) and --${source} both give the message: pass one`,
          `Usage: ${USAGE}`,
        );
      }
      const idempotencyKey = checkedKey(options.idempotencyKey);
      const textWords = source ? 0 : 1;
      if (words.length > textWords + (options.space === undefined ? 1 : 0)) {
        throw new UsageError(
          `too many arguments (${words.length})`,
          options.space === undefined
            ? `Quote text with spaces: convene send "hello world". Usage: ${USAGE}`
            : `--space names the space, so only the text follows: quote text with spaces, convene send --space SPACE "hello world". Usage: ${USAGE}`,
        );
      }
      // Without --space, a word before the text (the only word with --file or --image) names the space.
      const spaceReference = options.space ?? (words.length > textWords ? words[0] : undefined);
      const textArgument = source ? undefined : words.at(-1);
      const saved = withQuotingHint(() => ctx.space(spaceReference), {
        spaceOption: options.space,
        source,
        words,
        hasDefault: ctx.host().defaultSpace !== undefined,
        spaceNames: Object.values(ctx.host().spaces).map((s) => s.name),
      });
      // What was read, within what a message can take before its end is trimmed: a reading cut at
      // the limit would otherwise lose its rest and, trimmed, pass for a message that fits.
      const fitting = (text: string) => {
        if (Buffer.byteLength(text) > MESSAGE_BYTES) throw tooLong();
        return messageOf(text);
      };
      let content: string;
      if (options.image !== undefined) content = imageContent(options.image);
      else if (options.file !== undefined) content = fitting(await readTextFile(options.file, MESSAGE_BYTES));
      else if (textArgument === '-') {
        assertPiped('send -');
        content = fitting(await readStdin(MESSAGE_BYTES));
      } else if (textArgument === undefined && stdinIsPiped()) {
        // `… | convene send`, as `… | convene artifact write NAME`: what is piped is the message.
        content = fitting(await readStdin(MESSAGE_BYTES));
      } else content = await required(ctx.out, textArgument, { message: 'Message', usage: USAGE });
      if (content.trim() === '')
        throw new UsageError(
          content === '' ? 'the message is empty' : 'the message is blank (spaces alone)',
          `Usage: ${USAGE}`,
        );
      // Characters as the server counts them (code points): an emoji is one, not two.
      if (options.image === undefined && [...content].length > limits.messageMax) throw tooLong();
      const type = options.image !== undefined ? 'image' : options.html ? 'html' : 'text';
      const space = ctx.spaceClient(saved);
      const mentions = options.mention?.length
        ? await participantIds(ctx, space, options.mention)
        : undefined;
      const replyTo =
        options.replyTo === undefined ? undefined : await messageId(ctx, space, options.replyTo);
      // The SDK's key, chosen here so that Ctrl-C can say it even when the run ends before the
      // SDK's error does (interruptible's grace).
      const sentWith = idempotencyKey ?? randomUUID();
      // Ctrl-C while it is out: said as a lost answer is, with the key to send it again under.
      const { data: sent, response } = await interruptible(
        ctx,
        (signal) =>
          space.messages
            .send(
              {
                content,
                type,
                ...(mentions ? { mentions } : {}),
                ...(replyTo !== undefined ? { replyTo } : {}),
              },
              { signal, idempotencyKey: sentWith },
            )
            .withResponse(),
        `The message may have been sent all the same: \`${suggest(ctx, 'messages')}\` shows whether it was; sent again with \`--idempotency-key ${shellWord(sentWith)}\` (within 24 hours), it cannot be posted twice.`,
        { idempotencyKey: sentWith },
      ).catch((error: unknown) => {
        // A budget or a rate limit's longer refusal: which, and when to try again. Not "not
        // sent" after an attempt whose answer was lost: `explain` says it may have been.
        if (error instanceof RateLimitError && !error.mayHaveRun)
          throw refusedForNow(error, `not sent: ${serverWords(error)}`);
        // The server was never reached (the connection refused, the name not found): not sent,
        // certainly, where a lost answer is said to be perhaps sent. Unless under a key of yours,
        // which an earlier run may have sent it under.
        if (error instanceof ConnectionError && !error.mayHaveRun && idempotencyKey === undefined) {
          const failure = explain(error, ctx);
          throw new CliError(`not sent: ${failure.message}`, {
            exitCode: failure.exitCode,
            ...(failure.hint ? { hint: failure.hint } : {}),
            details: failure.details,
            cause: error,
          });
        }
        // A whole id the server finds no message of (a start that names none is found so before).
        if (replyTo !== undefined && refusesReplyTo(error)) throw noMessage(ctx, options.replyTo!, error);
        if (error instanceof ConveneError && error.code === 'idempotency_mismatch') {
          throw new UsageError(
            `not sent: the key ${error.idempotencyKey} went with another message (its text, type, --mention or --reply-to differ)`,
            'Give a new --idempotency-key for a new message; to send the first one again, repeat it as it was.',
          );
        }
        throw error;
      });
      // Your key, which the server had: answered as the first send under it was (perhaps this
      // command's own attempt whose answer was lost, which it retried), and posted once.
      const already = idempotencyKey !== undefined && response.headers.get('idempotency-replayed') === 'true';
      // --json: the API's answer, and `alreadySent` when it is that replay (as `alreadyRevoked`
      // says a revoke found done): a script can tell it from a first post.
      ctx.out.result(already ? { ...sent, alreadySent: true } : sent, {
        quiet: () => sent.messageId,
        human: () =>
          ctx.out.success(
            already
              ? `Sent to ${ctx.out.c.bold(saved.name)}, once: the server had a message under this key already, and did not post it again`
              : `Sent to ${ctx.out.c.bold(saved.name)}`,
          ),
      });
      if (type === 'text') {
        for (const stray of strayMentions(content, sent.participants, sent.mentions))
          ctx.out.warn(strayWarning(ctx, stray));
      }
    });
}

/** A message past what one holds, from its text, a file or stdin. */
const tooLong = () =>
  new UsageError(
    `the message is too long: a message holds at most ${limits.messageMax.toLocaleString('en')} characters`,
    'Put longer text in a document (`convene artifact create NAME --file F`) and send a line about it.',
  );

/**
 * --idempotency-key as HTTP can carry it: 1 to 255 visible ASCII characters, spaces only between
 * them (a header value loses its ends' spaces; fetch refuses line breaks and what Latin-1 lacks).
 */
function checkedKey(key: string | undefined): string | undefined {
  if (key === undefined) return undefined;
  if (key.length === 0 || key.length > limits.idempotencyKeyMax) {
    throw new UsageError(
      `--idempotency-key takes 1 to ${limits.idempotencyKeyMax} characters (${key.length} given)`,
      `Usage: ${USAGE}`,
    );
  }
  if (!/^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(key)) {
    throw new UsageError(
      '--idempotency-key takes visible ASCII characters (letters, digits, punctuation; spaces only between them)',
      'A UUID, or a name of your own such as deploy-2026-11-28.',
    );
  }
  return key;
}

/**
 * `convene send hello world` names a space "hello": when no space is called so, the text was more
 * likely two words left unquoted, and the error says how to send them to the default space (once,
 * as the command that does it; not when there is no default space, nor when the text is `-`,
 * stdin, since a word before it can only name a space, nor when a space is called nearly so, the
 * likelier meaning, which the error suggests). Likewise the one word beside --file or
 * --image (`convene send --image URL caption`) names a space, not a caption.
 */
function withQuotingHint<T>(
  resolve: () => T,
  how: {
    spaceOption: string | undefined;
    source: 'file' | 'image' | undefined;
    words: string[];
    hasDefault: boolean;
    spaceNames: string[];
  },
): T {
  try {
    return resolve();
  } catch (error) {
    const { spaceOption, source, words } = how;
    if (spaceOption !== undefined || words.length !== (source ? 1 : 2)) throw error;
    if (!(error instanceof CliError) || error.exitCode !== ExitCode.notFound) throw error;
    if (!source && (words[1] === '-' || !how.hasDefault)) throw error;
    // A space one typo away (`send Alpah hello`, Alpha) is the likelier meaning: its suggestion alone.
    if (closest(words[0]!, how.spaceNames)) throw error;
    const text = quoted(words.join(' '));
    const hint = source
      ? `With --${source}, the message is the ${source} alone and a word beside it names the space: send ${text} as a message of its own.`
      : `To send the words as one message to the default space, quote them: ${commandLine('send', { args: [words.join(' ')] })}.`;
    const Failure = error.constructor as typeof CliError;
    throw new Failure(error.message, {
      exitCode: error.exitCode,
      hint: `${error.hint ? `${error.hint} ` : ''}${hint}`,
    });
  }
}

/**
 * What a sender learns of an `@Word` that mentioned nobody: the message went, but into nobody's
 * inbox. Said on stderr (a warning, so --json and --quiet keep it), with the names it may have
 * meant and how a mention is written.
 */
function strayWarning(ctx: Context, stray: StrayMention): string {
  const word = `@${inline(stray.word)}`;
  const said = 'The message was sent as it is.';
  if (stray.near.length === 0) {
    return `${word} mentions nobody: no participant’s name follows the @ (\`${suggest(ctx, 'participants')}\` lists them). ${said}`;
  }
  const meant = listed(stray.near.map((name) => `@${inline(name)}`));
  return `${word} mentions nobody (did you mean ${meant}?): a mention is @ and a participant’s whole name, in any case. ${said}`;
}

/**
 * What a file or a pipe says as a message: the newline(s) it ends with are not part of it, nor is
 * the byte order mark some editors put first (a document keeps it: its bytes are its own).
 */
const messageOf = (text: string) => text.replace(/^\uFEFF/, '').replace(/[\r\n]+$/, '');

/**
 * The message --reply-to names: an id passes as it is (the server says whether it names one of
 * the space's: `refusesReplyTo`); the start of one (4 characters or more, as other id arguments
 * take) is looked up among the space's messages.
 */
async function messageId(ctx: Context, space: SpaceClient, reference: string): Promise<string> {
  if (isUuid(reference)) return reference;
  const messages: { id: string }[] = [];
  if (reference.length >= 4) for await (const message of space.messages.list()) messages.push(message);
  return byIdStart(messages, reference, {
    noun: 'message',
    id: (m) => m.id,
    label: (m) => m.id,
    listCommand: messageList(ctx),
  }).id;
}

/** Where a message's ids are listed whole. */
const messageList = (ctx: Context): string => suggest(ctx, 'messages', { options: { '-q': true } });

/**
 * Whether the server refused the send because its replyTo names no message of the space (a 400
 * whose issue is that field's): a whole id that names nothing, said as the start of one that names
 * nothing is (`noMessage`), not as a value the command line got wrong.
 */
function refusesReplyTo(error: unknown): boolean {
  if (!(error instanceof ConveneError) || error.status !== 400) return false;
  const issues = (error.body as { issues?: unknown } | undefined)?.issues;
  return (
    Array.isArray(issues) && issues.some((issue) => (issue as { path?: unknown[] })?.path?.[0] === 'replyTo')
  );
}

/** --reply-to's whole id that names no message of the space: not found (exit 5), as a start is. */
function noMessage(ctx: Context, reference: string, cause: unknown): CliError {
  return new CliError(`no message "${reference}"`, {
    exitCode: ExitCode.notFound,
    hint: `See the messages and their ids with \`${messageList(ctx)}\` (an id or its first 4 characters or more).`,
    cause,
  });
}

/**
 * --mention values as participantIds: ids pass; names (any case), their starts (`ada` for Ada
 * Lovelace, when no one else's name starts so) and id starts are looked up among those in the
 * space. One that names nobody is not found (exit 5), as any participant named so.
 */
async function participantIds(ctx: Context, space: SpaceClient, who: string[]): Promise<string[]> {
  if (who.every((w) => isUuid(w))) return who;
  const { participants } = await ctx.readSpace(space);
  const listCommand = suggest(ctx, 'participants');
  return who.map((w) => (isUuid(w) ? w : mentionedId(participants, w, listCommand)));
}

/**
 * The participantId one --mention value names, among those in the space (active or muted). A
 * whole name (any case) is that participant's before any name start is tried: `--mention bob`
 * with Bob gone (left, kicked) and Bobby active is not found, never Bobby; the start of a name
 * names someone only when nobody, there or gone, has that name.
 */
export function mentionedId(
  participants: readonly { participantId: string; name: string; status: string }[],
  w: string,
  listCommand: string,
): string {
  const live = participants.filter(canBeMentioned);
  const what = participantNaming;
  const exact = findExact(live, w, what);
  if (exact) return exact.participantId;
  const gone = participants.filter((p) => !live.includes(p) && sameName(p.name, w));
  if (gone.length > 0) {
    const first = gone[0]!;
    throw new CliError(`nobody called "${w}" is in this space`, {
      exitCode: ExitCode.notFound,
      hint: `${inline(first.name)}’s status is ${first.status}: only those active or muted can be mentioned. See who is there with \`${listCommand}\`; --mention also takes a participantId.`,
    });
  }
  const found = find(live, w, { ...what, byNameStart: true });
  if (found) return found.participantId;
  const near = closest(
    w,
    live.map((p) => p.name),
  );
  throw new CliError(`nobody called "${w}" is in this space`, {
    exitCode: ExitCode.notFound,
    hint: `${near ? `Did you mean "${inline(near)}"? ` : ''}See who is there with \`${listCommand}\`; --mention also takes a participantId.`,
  });
}
