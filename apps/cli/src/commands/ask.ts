import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../app';
import { required } from '../lib/prompts';

export function registerAsk(program: Command, app: App): void {
  program
    .command('ask')
    .argument('[question...]', 'what you want to know, in your own words')
    .usage('QUESTION')
    .summary('search the docs, the API and public spaces')
    .description(
      'Ask the server in natural language: it searches its documentation, its API operations and public spaces.',
    )
    .addHelpText(
      'after',
      examples('convene ask how do I lock an artifact', 'convene ask "join a private space" --json'),
    )
    .action(async (words, _options, command) => {
      const ctx = app.context(command);
      const query = await required(ctx.out, words.join(' ').trim() || undefined, {
        message: 'Your question',
        usage: 'convene ask QUESTION',
      });
      const answer = await ctx.hub().ask(query);
      const { out } = ctx;
      out.result(answer, {
        quiet: () => answer.results.map((r) => r.url).join('\n') || undefined,
        human: () => {
          if (answer.results.length === 0) {
            out.info(`Nothing found for "${query}". Try other words, or read ${ctx.url}/llms.txt.`);
            return;
          }
          answer.results.forEach((result, i) => {
            if (i > 0) out.line();
            out.line(`${out.c.bold(result.name)}`);
            out.line(out.c.cyan(result.url));
            if (result.description) out.line(out.c.dim(result.description));
          });
        },
      });
    });
}
