import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../../app';
import { findArtifact } from '../../lib/artifacts';
import { safeFileName } from '../../lib/editor';
import { CliError } from '../../lib/errors';
import { ExitCode } from '../../lib/exit-codes';
import { writingTo } from '../../lib/failure';
import { checkVersion } from '../../lib/input';

export function registerArtifactDownload(artifact: Command, app: App): void {
  artifact
    .command('download')
    .argument('[artifact]', 'name or id (asked for on a terminal)')
    .usage('ARTIFACT [-o FILE|DIR] [--at N] [options]')
    .summary('the markdown as it is, to stdout or a file')
    .description(
      'Print a document’s markdown exactly as saved, or write it to a file with -o: the content alone, for editing or piping. ' +
        'With --at N, version N (`artifact history` lists them).',
    )
    .option('--at <version>', 'an earlier version (1, 2, …) instead of the latest')
    .option(
      '-o, --output <file>',
      'write to this file, or into this directory under the document’s name, instead of stdout (`-`: stdout)',
    )
    .option('-s, --space <space>', 'name or id (default: the default space)')
    .addHelpText(
      'after',
      examples(
        'convene artifact download plan.md > plan.md',
        'convene artifact download plan.md -o plan.md',
        'convene artifact download plan.md --at 1 -o plan-v1.md',
      ),
    )
    .action(async (reference, options, command) => {
      const ctx = app.context(command);
      checkVersion(options.at, '--at');
      const found = await findArtifact(
        ctx,
        options.space,
        reference,
        'convene artifact download ARTIFACT [-o FILE] [--at N]',
      );
      // The document read whole (content and version in one answer), so that the version said is
      // the one whose text this is, even while someone saves another.
      const { content: markdown, version } =
        options.at === undefined
          ? await found.space.artifacts.get(found.artifact.id)
          : await found.space.artifacts.version(found.artifact.id, Number(options.at));
      const { out } = ctx;
      // `-o -` is stdout, as `--file -` is stdin: never a file named `-`.
      if (options.output !== undefined && options.output !== '-') {
        // A directory, as `cp` takes one: the document goes in it, under a file name of its own.
        // One named so (`notes/`) that is not there is said as such, not as "it is a directory".
        if (/[/\\]$/.test(options.output) && !isDirectory(options.output))
          throw new CliError(`cannot save into ${options.output}: no such directory`, {
            exitCode: ExitCode.notFound,
            hint: 'Create it first, or give a file name.',
          });
        const file = isDirectory(options.output)
          ? join(options.output, fileNamed(found.artifact.name))
          : options.output;
        writingTo(file, () => writeFileSync(file, markdown));
        out.result(
          {
            id: found.artifact.id,
            name: found.artifact.name,
            version,
            file,
            bytes: Buffer.byteLength(markdown),
          },
          {
            quiet: () => file,
            human: () =>
              out.success(`Saved ${out.c.bold(found.artifact.name)} version ${version} to ${file}`),
          },
        );
        return;
      }
      // The content is the output, even with --json: a document is not JSON.
      if (out.mode.json)
        out.json({ id: found.artifact.id, name: found.artifact.name, version, content: markdown });
      else out.raw(markdown);
    });
}

/**
 * A document's name as a file name in a directory: as it is when it is one (no slash, backslash or
 * control character, not `.` or `..`), so that two documents whose names differ in a space never
 * share a file; else made safe.
 */
function fileNamed(name: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
  return /[/\\\x00-\x1f\x7f]/.test(name) || name === '.' || name === '..' ? safeFileName(name) : name;
}

/** Whether `path` is a directory (`-o notes/`), following a link; nothing there is not one. */
function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
