import type { Command } from '@commander-js/extra-typings';
import { Context, type GlobalOptions } from './lib/context';
import { whenStdinIsQuiet } from './lib/input';

/**
 * What every command file gets: the run's context, built on first use from the global options
 * (--url, --json, --quiet, --no-color) wherever they were written on the command line.
 */
export interface App {
  // biome-ignore lint/suspicious/noExplicitAny: any command of the tree, whatever its typed arguments.
  context(command: Command<any, any, any>): Context;
}

export function createApp(signal: AbortSignal): App & { current(): Context | undefined } {
  let context: Context | undefined;
  return {
    context(command) {
      if (!context) {
        context = new Context(command.optsWithGlobals() as GlobalOptions, signal);
        const { out } = context;
        whenStdinIsQuiet((text) => out.warn(text));
      }
      context.commandName ??= commandPath(command);
      return context;
    },
    current: () => context,
  };
}

/** `Examples:` under a command's help, gh style. */
export function examples(...lines: string[]): string {
  return `\nExamples:\n${lines.map((line) => (line.startsWith('#') ? `  ${line}` : `  $ ${line}`)).join('\n')}\n`;
}

/** `convene space create`: a command's full name, from the program down. */
// biome-ignore lint/suspicious/noExplicitAny: any command of the tree, whatever its typed arguments.
export function commandPath(command: Command<any, any, any>): string {
  const names: string[] = [];
  for (let c: Command | null = command as Command; c; c = c.parent as Command | null) names.unshift(c.name());
  return names.join(' ');
}
