import type { Command } from '@commander-js/extra-typings';
import {
  type ArtifactView,
  AuthenticationError,
  ConflictError,
  LockedError,
  limits,
  RateLimitError,
  type SpaceClient,
} from '@convene/sdk';
import { type App, examples } from '../../app';
import {
  explainingLocks,
  findArtifact,
  LOCK_WAIT_OPTION,
  parseLockWait,
  released,
  reportWrite,
  takeLock,
} from '../../lib/artifacts';
import type { Context } from '../../lib/context';
import { EditFile, editorCommand, runEditor } from '../../lib/editor';
import { CliError, UsageError } from '../../lib/errors';
import { ExitCode, stoppedBy } from '../../lib/exit-codes';
import { explained } from '../../lib/failure';
import { inline } from '../../lib/output';
import { quoted, type Value, verbatim } from '../../lib/quote';
import { when } from '../../lib/render';
import { suggest } from '../../lib/suggest';

export function registerArtifactEdit(artifact: Command, app: App): void {
  artifact
    .command('edit')
    .argument('[artifact]', 'name or id (asked for on a terminal)')
    .usage('ARTIFACT [options]')
    .summary('edit a document in $EDITOR under its lock')
    .description(
      'Edit a document in your editor ($VISUAL, else $EDITOR, else vi). convene takes the lock, ' +
        'keeps it alive while the editor is open, and when you save and quit writes a new version ' +
        '(only if the text changed, and only over the version you started from), then releases the ' +
        'lock. If the editor fails or is stopped by Ctrl-C (or convene by SIGTERM or SIGHUP), nothing is ' +
        'written, the lock is released and your text is kept in a file whose path is printed. If someone else holds the lock, it says ' +
        'who and until when (exit 6), or with --wait waits for them to finish.',
    )
    .option('-s, --space <space>', 'name or id (default: the default space)')
    .option(...LOCK_WAIT_OPTION)
    .addHelpText(
      'after',
      examples(
        'convene artifact edit plan.md',
        'convene artifact edit plan.md --wait 5m',
        'EDITOR="code --wait" convene artifact edit plan.md',
      ),
    )
    .action(async (reference, options, command) => {
      const ctx = app.context(command);
      const { out } = ctx;
      const waitMs = parseLockWait(options.wait);
      await refuseBlindEditor(ctx, reference, options.space);
      const found = await findArtifact(ctx, options.space, reference, 'convene artifact edit ARTIFACT');
      const { space, artifact: summary } = found;
      ctx.handlesInterrupt = true;
      const lock = await takeLock(ctx, found, waitMs, {
        undone: 'nothing was edited',
        whateverTheLock: true,
      });
      // Set once the server says the lock is not ours any more (it lapsed, and someone may hold it).
      let lost = false;
      // The save was refused for the key (you were removed, the space closed): nothing to release.
      let keyRefused = false;
      const noticingLoss = <T>(call: Promise<T>) =>
        call.catch((error: unknown) => {
          if (error instanceof LockedError) lost = true;
          throw error;
        });
      const heartbeat = new Heartbeat(
        () => noticingLoss(space.artifacts.heartbeat(summary.id)),
        lock.lockExpiresAt,
        (message) => out.warn(message),
        howLost(found.saved.role),
      );
      let file: EditFile | undefined;
      try {
        // Read under the lock: nobody can write between this version and ours.
        const doc = await space.artifacts.get(summary.id);
        file = new EditFile(doc.name, doc.content);
        const { path } = file;
        const editor = editorCommand();
        out.info(
          `Editing ${out.c.bold(doc.name)} (version ${doc.version}) with ${editor}; locked, kept alive while it is open.`,
        );
        // Ctrl-C (SIGTERM, SIGHUP) before the editor opened: nothing to edit.
        if (ctx.signal.aborted)
          throw new CliError('interrupted', { exitCode: stoppedBy(ctx.signal).exitCode });
        ctx.editorOwnsInterrupt = true;
        // The editor has the screen: what would be said meanwhile on stderr (a heartbeat that
        // failed, a server that went away) is said once it exits, each line once.
        const exit = await out
          .holding(() => runEditor(editor, path, ctx.signal))
          .finally(() => {
            ctx.editorOwnsInterrupt = false;
          });
        heartbeat.stop();
        // The editor stopped by Ctrl-C, or convene asked to stop (SIGTERM, or SIGHUP: its terminal
        // closed) while it was open: the editor was told to stop too (runEditor).
        const interrupted = ctx.signal.aborted || (!exit.ok && exit.interrupted === true);
        if (interrupted || !exit.ok) {
          // A text still as it was opened (an editor that could not run, one closed before a
          // save) is nothing to keep: a copy of the document, and a write that would change nothing.
          const edited = file.changedFrom(doc.content);
          const kept = edited ? file.keep(doc.name) : undefined;
          // Ctrl-C when nothing aborted: the editor's own interrupt.
          const stop = stoppedBy(ctx.signal);
          throw new CliError(
            `${interrupted ? stop.said : exit.ok ? 'stopped' : exit.reason}: nothing was saved`,
            {
              exitCode: interrupted ? stop.exitCode : ExitCode.error,
              hint: `${!exit.ok && exit.hint ? `${exit.hint}\n` : ''}${
                kept === undefined
                  ? `No change was saved: ${quoted(doc.name)} is as it was (version ${doc.version}).`
                  : keptHint(ctx, found.named, doc.version, kept)
              }`.trim(),
            },
          );
        }
        const text = file.read();
        const max = limits.artifactContentMax;
        if (Buffer.byteLength(text) > max) {
          // The server would refuse it (so would `artifact write` of the kept file): said in a
          // document's terms, before anything is sent.
          const kept = file.keep(doc.name);
          throw new UsageError(
            `the edited ${doc.name} is too large: a document holds at most ${max / 2 ** 20} MiB (${max} bytes in UTF-8); nothing was saved`,
            `Your text is kept in ${kept}\nShorten it, or split it into several documents.`,
          );
        }
        // The lock taken for this edit alone is released below: the answer shows it no more.
        const after = <T extends ArtifactView>(view: T) => (found.heldByMe ? view : released(view));
        if (text === doc.content) {
          reportWrite(out, after(doc), false, () =>
            out.success(
              `No changes to ${out.c.bold(doc.name)}: nothing written (still version ${doc.version})`,
            ),
          );
          return;
        }
        let saved: Awaited<ReturnType<typeof space.artifacts.write>>;
        try {
          saved = await explainingLocks({ ...found.lockContext, artifactName: doc.name }, () =>
            noticingLoss(space.artifacts.write(doc.id, text, { baseVersion: doc.version })),
          );
        } catch (error) {
          const kept = file.keep(doc.name);
          const failure = explained(error, ctx);
          // Someone saved meanwhile (under the lock you held before, or with your key elsewhere).
          const stale = error instanceof ConflictError && error.code === 'version_conflict';
          const now = stale ? error.version : undefined;
          // The key no longer works (you were removed, the space closed): saving later cannot work
          // either, nor releasing the lock; what to do is the key's hint.
          keyRefused = error instanceof AuthenticationError;
          // The lock was lost (the owner released it, or it lapsed), or the version moved on: a write
          // on the version opened would be stale already, so the document is read again, to say
          // what changed and to base the write on the version now. A read that fails says less.
          const moved =
            !keyRefused && (lost || stale)
              ? await documentNow(space, doc.id, found.saved.participantId).catch(() => undefined)
              : undefined;
          throw new CliError(`could not save ${doc.name}: ${failure.message}`, {
            exitCode: failure.exitCode,
            hint: keyRefused
              ? `Your text is kept in ${kept}\n${failure.hint ?? ''}`.trim()
              : moved
                ? changedHint(ctx, found.named, doc.version, kept, moved, lost && found.saved.role)
                : // A 429 says when the save can be tried again, before where the text is.
                  `${error instanceof RateLimitError ? `${failure.hint}\n` : ''}${keptHint(ctx, found.named, doc.version, kept, now)}`,
            cause: error,
          });
        }
        reportWrite(out, after(saved), true, () =>
          out.success(`Saved ${out.c.bold(saved.name)} as version ${saved.version}`),
        );
      } finally {
        heartbeat.stop();
        file?.remove();
        // Leave the lock as it was: released, unless it was held before the edit began, or lost:
        // whoever holds it now keeps it (an owner's unlock would force theirs).
        if (!found.heldByMe && !lost && !keyRefused) {
          await space.artifacts.unlock(summary.id).catch((error: unknown) => {
            // Someone else holds it now (the owner took it over): nothing of ours to release.
            if (error instanceof LockedError) return;
            out.warn(`could not release the lock: ${(error as Error).message} (it lapses by itself)`);
          });
        }
      }
    });
}

/**
 * vi, the editor of last resort, needs a terminal: given a pipe (an agent, a script), it fails or
 * waits on the pipe while the lock is kept alive. An editor set on purpose is run as it is (a
 * script can be one); with none set and no terminal, the text is written another way.
 */
async function refuseBlindEditor(
  ctx: Context,
  reference: string | undefined,
  spaceReference: string | undefined,
): Promise<void> {
  if (process.env.VISUAL || process.env.EDITOR || process.stdin.isTTY || process.platform === 'win32') return;
  // The space the other commands are to act on (a space named wrong is said first, as it would be).
  ctx.space(spaceReference);
  // The document as it is now (read, not locked): the hint names it and its version.
  const found =
    reference === undefined
      ? undefined
      : await findArtifact(ctx, spaceReference, reference, 'convene artifact edit ARTIFACT');
  const doc = found?.named ?? verbatim('ARTIFACT');
  const base = verbatim(found ? found.artifact.version : 'N');
  const file = verbatim('F');
  // Someone else's lock now: the write waits for it (as changedHint's), where one without --wait
  // would be refused at once.
  const lockedBy = found?.artifact.lockedBy;
  const holder =
    found && lockedBy !== undefined && !found.heldByMe
      ? inline(found.names.get(lockedBy) ?? lockedBy)
      : undefined;
  const write = suggest(ctx, 'artifact write', {
    args: [doc],
    options: { '--file': file, '--base-version': base, ...(holder ? { '--wait': verbatim('5m') } : {}) },
  });
  throw new UsageError(
    'no editor to open: $VISUAL and $EDITOR are not set, and vi needs a terminal',
    `Set EDITOR (e.g. EDITOR="code --wait"), or edit a copy: \`${suggest(ctx, 'artifact download', { args: [doc], options: { '-o': file } })}\`, ` +
      `then \`${write}\` ` +
      (found
        ? `(${base.verbatim}: the version now; refused if someone saves another first${holder ? `; ${holder} holds its lock now, which --wait waits out` : ''}).`
        : '(N: the version downloaded).'),
  );
}

/**
 * Keeps a lock alive: refreshes it at a third of its remaining lifetime, at most a minute apart.
 * The lifetime is measured on this machine's clock against the server's expiry; when that looks
 * short (a skewed clock, or a short lock lifetime) it refreshes at least every half second.
 */
class Heartbeat {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly beat: () => Promise<{ lockExpiresAt: string }>,
    /** Until when the lock is held, as the server last said it. */
    private expiresAt: string,
    private readonly warn: (message: string) => void,
    /** How the lock can have gone, for your role (howLost). */
    private readonly lostHow: string,
  ) {
    this.schedule(expiresAt);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private schedule(expiresAt: string): void {
    if (this.stopped) return;
    const remaining = new Date(expiresAt).getTime() - Date.now();
    const wait = remaining > 3000 ? Math.min(remaining / 3, 60_000) : Math.max(remaining / 3, 500);
    this.timer = setTimeout(() => {
      this.beat().then(
        (lock) => {
          this.expiresAt = lock.lockExpiresAt;
          this.schedule(lock.lockExpiresAt);
        },
        (error: unknown) => {
          if (this.stopped) return;
          // Said once the editor exits (Output.holding), and once for failures alike: the time
          // is the lock's expiry, not how far it was from when the beat failed.
          // Your lock is no more (it lapsed, or the owner unlocked it): the server's "lock it first"
          // is not what to do in an editor whose save says what happened meanwhile.
          const gone = error instanceof LockedError && error.code === 'lock_not_held';
          this.warn(
            gone
              ? `your lock is gone (${this.lostHow}; it was held until ${when(this.expiresAt)}): saving may fail`
              : `could not keep the lock: ${(error as Error).message}; saving may fail (it was held until ${when(this.expiresAt)})`,
          );
          this.schedule(new Date(Date.now() + 15_000).toISOString());
        },
      );
    }, wait);
  }
}

/**
 * How an editor's lock can have gone: the owner's is released by nobody else (by its key
 * elsewhere, another terminal, or it lapsed); a participant's also by the owner.
 */
const howLost = (role: 'owner' | 'participant') =>
  role === 'owner' ? 'it lapsed, or your key released it elsewhere' : 'the owner released it, or it lapsed';

/** A document as it stands after a save was refused: its version, who saved it, who locks it. */
interface DocumentNow {
  version: number;
  /** Who saved the version now: a name, or `you` (your key, elsewhere). */
  savedBy: string;
  savedAt: string;
  /** Who holds its lock now, when someone else does, and until when. */
  lockedBy?: { name: string; until: string | undefined };
}

/** The document read again, with the names of who saved it and who holds its lock. */
async function documentNow(space: SpaceClient, id: string, me: string): Promise<DocumentNow> {
  const [doc, view] = await Promise.all([space.artifacts.get(id), space.get()]);
  const names = new Map(view.participants.map((p) => [p.participantId, p.name]));
  const who = (participantId: string) =>
    participantId === me ? 'you' : inline(names.get(participantId) ?? participantId);
  return {
    version: doc.version,
    savedBy: who(doc.updatedBy),
    savedAt: doc.updatedAt,
    ...(doc.lockedBy && doc.lockedBy !== me
      ? { lockedBy: { name: who(doc.lockedBy), until: doc.lockExpiresAt } }
      : {}),
  };
}

/**
 * Where an unsaved edit was kept, and what changed since the version `base` it was edited from,
 * read once the save was refused (`now`): the lock lost while the editor was open (`lockLost`, the
 * editor's role: the owner released it, or it lapsed), a version saved since, by whom, and its diff; then the
 * write based on the version now, which saves the text over it knowingly (with `--wait` when
 * someone holds the lock now), where one based on `base` would be refused as stale.
 */
function changedHint(
  ctx: Context,
  doc: Value,
  base: number,
  kept: string,
  now: DocumentNow,
  lockLost: false | 'owner' | 'participant',
): string {
  const holder = now.lockedBy
    ? `${now.lockedBy.name} holds its lock now${now.lockedBy.until ? `, until ${when(now.lockedBy.until)}` : ''}`
    : undefined;
  const write = suggest(ctx, 'artifact write', {
    args: [doc],
    options: {
      '--file': kept,
      '--base-version': verbatim(now.version),
      ...(holder ? { '--wait': verbatim('5m') } : {}),
    },
  });
  const lost = lockLost ? `Your lock on it was lost while the editor was open (${howLost(lockLost)}). ` : '';
  if (now.version === base) {
    return (
      `Your text is kept in ${kept}\n` +
      `${lost}Nobody saved since version ${base}, which you edited${holder ? `; ${holder}` : ', and nobody holds its lock'}.\n` +
      `Save it with: ${write}`
    );
  }
  const saved = `${now.version > base + 1 ? 'last saved' : 'saved'} by ${now.savedBy} at ${when(now.savedAt)}`;
  return (
    `Your text is kept in ${kept}\n` +
    `${lost}It was edited from version ${base}, and the document is at version ${now.version}, ${saved}: \`${suggest(ctx, 'artifact diff', { args: [doc, verbatim(base), verbatim(now.version)] })}\` shows what was saved since.\n` +
    `${holder ? `${holder}. ` : ''}Merge that into your text, then save it with: ${write}`
  );
}

/**
 * Where an unsaved edit was kept, and how to save it later. `base`: the version it was edited
 * from; the write suggested is based on it, so that it is refused (exit 6) rather than overwriting
 * a version someone saved meanwhile, and the diff shows what was saved since. `now`: the version a
 * save refused as stale found (someone saved since `base`): then the diff is from `base` to it,
 * and the write, once that is merged into the text, is based on `now`, which a plain retry on
 * `base` could never be.
 */
function keptHint(ctx: Context, doc: Value, base: number, kept: string, now?: number): string {
  const write = (version: number) =>
    suggest(ctx, 'artifact write', {
      args: [doc],
      options: { '--file': kept, '--base-version': verbatim(version) },
    });
  if (now !== undefined) {
    return (
      `Your text is kept in ${kept}\n` +
      `It was edited from version ${base}, and the document is at version ${now}: \`${suggest(ctx, 'artifact diff', { args: [doc, verbatim(base), verbatim(now)] })}\` shows what was saved since.\n` +
      `Merge that into your text, then save it with: ${write(now)}`
    );
  }
  return (
    `Your text is kept in ${kept}\n` +
    `Save it later with: ${write(base)}\n` +
    `(refused if someone saved another version since; \`${suggest(ctx, 'artifact diff', { args: [doc, verbatim(base)] })}\` shows what changed since version ${base})`
  );
}
