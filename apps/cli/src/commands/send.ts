import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../app';
import { UsageError } from '../lib/errors';
import { assertPiped, readStdin, readTextFile } from '../lib/input';
import { required } from '../lib/prompts';

const USAGE = 'convene send [SPACE] TEXT | --file F | - [--html | --image URL]';

export function registerSend(program: Command, app: App): void {
  program
    .command('send')
    .argument('[space-and-text...]', 'the text (`-` reads stdin), after an optional space name or id')
    .usage('[SPACE] TEXT | --file F | - [--html | --image URL]')
    .summary('send a message')
    .description(
      'Send a message to a space (the default space unless one is named first). The text comes ' +
        'from the argument, a file (--file), or stdin (`-`). --html sends it as HTML (readers ' +
        'sanitise it); --image sends an https: image URL.',
    )
    .option('-f, --file <file>', 'send the content of a file')
    .option('--html', 'the text is HTML')
    .option('--image <url>', 'send an image (an https: URL or a data:image/…;base64 URI)')
    .addHelpText(
      'after',
      examples(
        'convene send "Draft is ready for review"',
        'convene send "Release plan" "Dates are fixed"',
        'git log -5 --oneline | convene send -',
        'convene send --file notes.html --html',
        'convene send --image https://example.com/chart.png',
      ),
    )
    .action(async (words, options, command) => {
      const ctx = app.context(command);
      if (options.html && options.image !== undefined) {
        throw new UsageError('--html and --image cannot be used together', `Usage: ${USAGE}`);
      }
      const sourceGiven = options.file !== undefined || options.image !== undefined;
      if (words.length > (sourceGiven ? 1 : 2)) {
        throw new UsageError(
          `too many arguments (${words.length})`,
          `Quote text with spaces: convene send "hello world". Usage: ${USAGE}`,
        );
      }
      const spaceReference = sourceGiven ? words[0] : words.length === 2 ? words[0] : undefined;
      const textArgument = sourceGiven ? undefined : words.at(-1);
      const saved = ctx.space(spaceReference);
      let content: string;
      if (options.image !== undefined) content = options.image;
      else if (options.file !== undefined) content = trimEnd(await readTextFile(options.file));
      else if (textArgument === '-') {
        assertPiped('send -');
        content = trimEnd(await readStdin());
      } else content = await required(ctx.out, textArgument, { message: 'Message', usage: USAGE });
      if (content.trim() === '') throw new UsageError('the message is empty', `Usage: ${USAGE}`);
      const type = options.image !== undefined ? 'image' : options.html ? 'html' : 'text';
      const sent = await ctx.spaceClient(saved).messages.send({ content, type });
      ctx.out.result(sent, {
        quiet: () => sent.messageId,
        human: () => ctx.out.success(`Sent to ${ctx.out.c.bold(saved.name)}`),
      });
    });
}

/** The newline(s) a file or a pipe ends with are not part of the message. */
const trimEnd = (text: string) => text.replace(/[\r\n]+$/, '');
