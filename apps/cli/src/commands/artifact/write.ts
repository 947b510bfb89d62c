import { type Command, Option } from '@commander-js/extra-typings';
import { ConflictError } from '@convene/sdk';
import { type App, examples } from '../../app';
import {
  type FoundArtifact,
  findArtifact,
  LOCK_WAIT_OPTION,
  parseLockWait,
  reportWrite,
  writeUnlessSame,
} from '../../lib/artifacts';
import type { Context } from '../../lib/context';
import { CliError, UsageError } from '../../lib/errors';
import { ExitCode } from '../../lib/exit-codes';
import { conflictError } from '../../lib/failure';
import { checkVersion, readDocument } from '../../lib/input';
import { quoted, verbatim } from '../../lib/quote';
import { suggest } from '../../lib/suggest';

export function registerArtifactWrite(artifact: Command, app: App): void {
  artifact
    .command('write')
    .argument('[artifact]', 'name or id (asked for on a terminal)')
    .usage('ARTIFACT --file F | < F [--base-version N] [options]')
    .summary('replace a document’s content with a file or stdin')
    .description(
      'Replace the content of a document with a file (--file; `-` reads stdin), or with what is ' +
        'piped or redirected into stdin, as a new version (at most 1 MiB). Takes ' +
        'the lock for the write and releases it after, unless you already hold it (then keeps it). ' +
        'A text the document holds already is not written again (said so, exit 0; --json: ' +
        '"changed": false). With --base-version, refuses (exit 6) if someone saved another version ' +
        'since that one, before taking the lock. If someone else holds the lock, it says who and ' +
        'until when (exit 6), or with --wait waits for them to finish; then it writes only over ' +
        'the version it read before waiting: if they saved another meanwhile, nothing is written ' +
        '(exit 6; --base-version N writes over version N on purpose).',
    )
    .addOption(
      new Option('-f, --file <file>', 'the new content (`-` reads stdin; default: stdin when piped)'),
    )
    .option('--base-version <n>', 'the version your text is based on')
    .option('-s, --space <space>', 'name or id (default: the default space)')
    .option(...LOCK_WAIT_OPTION)
    .addHelpText(
      'after',
      examples(
        'convene artifact write plan.md --file plan.md',
        'convene artifact write plan.md --file plan.md --wait 2m',
        'convene artifact write plan.md --base-version 3 < plan.md',
        'pandoc notes.docx -t markdown | convene artifact write notes.md',
      ),
    )
    .action(async (reference, options, command) => {
      const ctx = app.context(command);
      checkVersion(options.baseVersion, '--base-version');
      const waitMs = parseLockWait(options.wait);
      // The content first, as `create` reads it: a file that does not open, or nothing to write,
      // is reported before the server is asked anything.
      const document = await readDocument(options.file);
      if (document === undefined) {
        throw new UsageError(
          '--file is required, or pipe the content in',
          'Usage: convene artifact write ARTIFACT --file F (`-` reads stdin), or … | convene artifact write ARTIFACT',
        );
      }
      const { content, stdin } = document;
      // An empty pipe is most often a command before it that failed: emptying a document takes
      // an empty file, on purpose.
      if (stdin && content === '') {
        throw new UsageError(
          'nothing came on stdin: the document is left as it is',
          'To empty it on purpose: --file /dev/null (every version is kept).',
        );
      }
      const found = await findArtifact(
        ctx,
        options.space,
        reference,
        'convene artifact write ARTIFACT --file F',
      );
      const base = options.baseVersion === undefined ? undefined : Number(options.baseVersion);
      const { space, artifact: summary } = found;
      // The document as it is now, read before any lock is taken: a stale --base-version, or the
      // text it holds already, ends here, rather than with a lock taken and released (a line each
      // in everyone's `tail`) for a write that does not happen. Both are checked again under the
      // lock (the server refuses a stale baseVersion itself).
      const current = await space.artifacts.get(summary.id);
      if (base !== undefined && current.version !== base) {
        throw new CliError(
          `--base-version ${base} is not the current version of ${JSON.stringify(current.name)} (${current.version}); nothing was written`,
          {
            exitCode: ExitCode.conflict,
            hint: staleHint(ctx, found, base, current.version),
            // As the server's 409 would have said it (it is checked before asking the server).
            details: { code: 'version_conflict', status: 409, version: current.version },
          },
        );
      }
      if (current.content === content) return unchanged(ctx, current);
      // Waiting for someone else's lock, the text goes only over the version read now: whoever
      // holds the lock is editing, and what they save while you wait would otherwise be replaced
      // by your text, unseen. --base-version says which version to write over.
      const waitedOver = base === undefined && waitMs !== undefined ? current.version : undefined;
      const baseVersion = base ?? waitedOver;
      const write = baseVersion === undefined ? {} : { baseVersion };
      const { changed, doc } = await writeUnlessSame(
        ctx,
        found,
        content,
        (locked, signal) =>
          locked
            ? locked.write(content, write)
            : space.artifacts.write(summary.id, content, write, signal ? { signal } : undefined),
        waitMs,
      ).catch((error: unknown) => {
        // A 409 `{error, version}`: someone saved another version than the one written over.
        if (
          !(error instanceof ConflictError && error.code === 'version_conflict') ||
          baseVersion === undefined
        )
          throw error;
        throw base !== undefined
          ? conflictError(error, staleHint(ctx, found, base, error.version))
          : savedMeanwhile(error, found, baseVersion, ctx);
      });
      if (!changed) return unchanged(ctx, doc);
      reportWrite(ctx.out, doc, true, () => {
        ctx.out.success(`Saved ${ctx.out.c.bold(doc.name)} as version ${doc.version}`);
        // Your lock, kept: the next write goes over this version (the one `artifact lock` said is
        // behind it now), and is refused should the lock lapse and someone save meanwhile.
        if (found.heldByMe)
          ctx.out.hint(
            `You still hold the lock: write again with \`${suggest(ctx, 'artifact write', { args: [found.named], options: { '--file': verbatim('F'), '--base-version': verbatim(doc.version) } })}\`; release it with \`${suggest(ctx, 'artifact unlock', { args: [found.named] })}\`.`,
          );
      });
    });
}

/**
 * A text the document holds already: nothing written, and said so (exit 0), as `artifact edit`
 * says it of a text left unchanged; `--json` is the document as it is, with `"changed": false`.
 */
function unchanged(ctx: Context, doc: { name: string; version: number }): void {
  reportWrite(ctx.out, doc, false, () =>
    ctx.out.info(
      `${ctx.out.c.bold(doc.name)} already holds this text (version ${doc.version}); nothing written.`,
    ),
  );
}

/**
 * A write that waited for the lock, refused because its holder saved another version meanwhile:
 * nothing written, what they saved, and how to write over it on purpose.
 */
function savedMeanwhile(error: ConflictError, found: FoundArtifact, read: number, ctx: Context): CliError {
  const now = error.version;
  const at = now === undefined ? 'another version' : `version ${now}`;
  return conflictError(
    error,
    `\`${diffSince(ctx, found, read, now)}\` shows what they saved; merge it into your text and write again, or write over it on purpose with \`--base-version ${now ?? 'N'}\`.`,
    `${quoted(found.artifact.name)} changed while you waited: ${at} was saved after version ${read}, the one your text would replace; nothing was written`,
  );
}

/** A stale --base-version in words: the version the document is at now, what changed since, the retry. */
function staleHint(ctx: Context, found: FoundArtifact, base: number, now: number | undefined): string {
  const doc = quoted(found.artifact.name);
  // A version it has not reached is no base at all (a typo, another document's number): there is
  // nothing to diff against, only the versions it has.
  if (now !== undefined && base > now)
    return `${doc} has no version ${base}: it is at version ${now}. \`${suggest(ctx, 'artifact history', { args: [found.named] })}\` lists its versions; give the one your text is based on.`;
  return now === undefined
    ? `Someone saved ${doc} since version ${base}: \`${diffSince(ctx, found, base)}\` shows what changed; merge it, then write again with the version it is at.`
    : `${doc} is at version ${now} now, not ${base}: \`${diffSince(ctx, found, base, now)}\` shows what changed since yours; merge it, then retry with \`--base-version ${now}\`.`;
}

/** The `artifact diff` of what was saved since version `since` (to `now`, else the latest). */
const diffSince = (ctx: Context, found: FoundArtifact, since: number, now?: number): string =>
  suggest(ctx, 'artifact diff', {
    args: [found.named, verbatim(since), ...(now === undefined ? [] : [verbatim(now)])],
  });
