import type { Command } from '@commander-js/extra-typings';
import { Context, type GlobalOptions } from './lib/context';

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
      context ??= new Context(command.optsWithGlobals() as GlobalOptions, signal);
      return context;
    },
    current: () => context,
  };
}

/** `Examples:` under a command's help, gh style. */
export function examples(...lines: string[]): string {
  return `\nExamples:\n${lines.map((line) => (line.startsWith('#') ? `  ${line}` : `  $ ${line}`)).join('\n')}\n`;
}
