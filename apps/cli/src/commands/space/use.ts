import type { Command } from '@commander-js/extra-typings';
import {
  AuthenticationError,
  type ConveneError,
  NotFoundError,
  parseInvitationLink,
  type SpaceClient,
} from '@convene/sdk';
import { type App, examples } from '../../app';
import { commandLine } from '../../lib/command-line';
import { type Context, DEFAULT_URL, isUuid, makeDefault, sameServer, sameServerAs } from '../../lib/context';
import { CliError, isSpaceClosed, UsageError } from '../../lib/errors';
import { ExitCode } from '../../lib/exit-codes';
import { serverWords } from '../../lib/failure';
import { checkedAnswer, ZAnswers } from '../../lib/not-convene';
import { required, secretFromStdin } from '../../lib/prompts';
import { shellWord, verbatim } from '../../lib/quote';
import { find } from '../../lib/resolve';
import { ownProfile, readWithHeldKey } from '../../lib/seat';
import { hostKey, type StoredSpace, type StoreFile } from '../../lib/store';
import { suggest } from '../../lib/suggest';
import { linkTarget, serverOfLink } from '../join';

export function registerSpaceUse(space: Command, app: App): void {
  space
    .command('use')
    .argument('[space]', 'name or id of a space you hold a key for (with --key: its whole id)')
    .usage('SPACE [--key KEY|-] [options]')
    .summary('make a space the default (or save a key for it, or recover yours after `convene login`)')
    .description(
      'Make a space the default for commands that name none. A space whose key this machine does not have yet (created or joined elsewhere) is recovered by its id from your account, after `convene login`. ' +
        'With --key, the owner or participant key given (by the SDK, a REST call, a teammate) is checked with the server and saved for the space, named by its id: its commands then act as that owner or participant. ' +
        'A working key already saved for the space is never replaced (it would be lost); one the server no longer takes is.',
    )
    .option(
      '--key <key>',
      'save this owner or participant key for the space (- reads it from stdin, or asks)',
    )
    .addHelpText(
      'after',
      examples(
        'convene space use "Release plan"',
        'convene space use 3f2e',
        '# after `convene login` on a new machine',
        'convene space use 3f2e1c0a-…',
        '# a key your agent created the space with, kept out of the shell history',
        'printf "%s" "$OWNER_KEY" | convene space use 3f2e1c0a-… --key -',
      ),
    )
    .action(async (reference, options, command) => {
      const ctx = app.context(command);
      const name = await required(
        ctx.out,
        reference,
        options.key === undefined
          ? { message: 'Space (name or id)', usage: 'convene space use SPACE' }
          : { message: 'Space id', usage: 'convene space use SPACE_ID --key KEY' },
      );
      const canRecover = isUuid(name) && !ctx.host().spaces[name] && (ctx.hasSession() || ctx.userToken());
      // A key saved (given or recovered) makes its space the default as it is saved.
      let saved: StoredSpace & { alreadySaved?: boolean; url?: string };
      if (options.key !== undefined) saved = await saveGivenKey(ctx, name, options.key);
      else if (canRecover) saved = await recoverKey(ctx, name);
      else {
        const chosen = ctx.space(name);
        ctx.store.updateHost(ctx.url, (host, file) => makeDefault(file, host, ctx.url, chosen.spaceId));
        saved = chosen;
      }
      ctx.out.result(
        {
          spaceId: saved.spaceId,
          name: saved.name,
          role: saved.role,
          participantId: saved.participantId,
          // The server it is saved for: an invitation link's, with --key.
          url: saved.url ?? ctx.url,
          ...(saved.alreadySaved !== undefined ? { alreadySaved: saved.alreadySaved } : {}),
        },
        {
          quiet: () => saved.spaceId,
          human: () =>
            ctx.out.success(`Default space is now ${ctx.out.c.bold(saved.name)} (${saved.spaceId})`),
        },
      );
    });
}

/**
 * The key the logged-in human holds for a space (getMySpaceKey), with the dashboard session or
 * the usr_ token; saved like a key of a space created or joined here.
 */
async function recoverKey(ctx: Context, spaceId: string): Promise<StoredSpace> {
  const session = ctx.hasSession() ? ctx.session() : undefined;
  if (!session) ctx.using = { kind: 'server' };
  const recovered = await (session ? session.spaceKey(spaceId) : ctx.hub().spaces.recoverKey(spaceId)).catch(
    (error: unknown) => {
      // As for any whole space id this machine holds no key for (exit 4): the space may well
      // exist, and what is missing is a key, which joining gives.
      if (!(error instanceof NotFoundError)) throw error;
      // Why, when the account held a key there (removed, left, the space over): the server says
      // so to that account alone, its code saying which.
      const why = /^key for this space not found: (.+)$/.exec(error.body?.error ?? '')?.[1];
      const over = isSpaceClosed(error);
      throw new CliError(
        `your account holds no ${why ? 'working ' : ''}key for space ${spaceId}${why ? `: ${why}` : ''}`,
        {
          // A space that is over exits 6, as a closed space does for every command.
          exitCode: over ? ExitCode.conflict : ExitCode.auth,
          ...(over
            ? {}
            : {
                hint: 'Join it with an invitation link (`convene join LINK`), or log in as the account that created or joined it.',
              }),
          cause: error,
        },
      );
    },
  );
  const { role, privateKey } = checkedAnswer(ZAnswers.recoveredKey, recovered, ctx.url);
  const view = await ctx.hub().space(spaceId, privateKey).get();
  checkedAnswer(ZAnswers.spaceName, view, ctx.url);
  // Which participant the key is: the dashboard lists it; the owner is the one marked so.
  const listed = session ? (await session.spaces()).spaces.find((s) => s.spaceId === spaceId) : undefined;
  const participantId =
    listed?.participantId ??
    (role === 'owner' ? view.participants.find((p) => p.isOwner)?.participantId : undefined);
  const space = { spaceId, name: view.name, role, key: privateKey, participantId: participantId ?? '' };
  // A plain save: a recovered key that cannot be kept is not lost, the account recovers it again.
  ctx.saveSpace(space);
  ctx.out.success(`Recovered your ${role} key for ${ctx.out.c.bold(view.name)}`);
  return { ...space, savedAt: new Date().toISOString() };
}

/**
 * An owner or participant key obtained elsewhere (the SDK, a REST call, a teammate), saved for the
 * space `reference` names (its id; or a space saved here, by name) once the server says whose it
 * is. A working key saved for that space already is kept: refused, since saving another in its
 * place would lose it. The same key again changes nothing but the default space.
 */
async function saveGivenKey(
  ctx: Context,
  reference: string,
  given: string,
): Promise<StoredSpace & { alreadySaved: boolean; url: string }> {
  const { spaceId, url } = spaceOf(ctx, reference);
  const key = keyGiven(
    given === '-'
      ? await secretFromStdin(
          ctx.out,
          {
            message: 'Paste the space key',
            usage: 'printf "%s" "$KEY" | convene space use SPACE_ID --key -',
          },
          4096,
        )
      : given,
    given === '-',
  );
  ctx.using = { kind: 'server' };
  let view: Awaited<ReturnType<SpaceClient['get']>>;
  try {
    view = await ctx.hub(url).space(spaceId, key).get();
  } catch (error) {
    throw refusedKey(error, spaceId, url);
  }
  // The command lines said from here name the server when it is not the one of the next commands.
  const urlFlag = sameServer(url, ctx.url) ? ctx.urlFlag() : { '--url': verbatim(shellWord(url)) };
  const { name, you } = checkedAnswer(ZAnswers.keyHolder, view, url);
  if (you.role === 'invitation') {
    throw new UsageError(
      `that is an invitation key of "${name}": it lets someone join, and is nobody's key yet`,
      `Join with it: \`${commandLine('join', { args: [verbatim(spaceId)], options: { '--key': verbatim('KEY'), ...urlFlag } })}\`.`,
    );
  }
  const space = { spaceId, name, role: you.role, key, participantId: you.participantId };
  const held = ctx.heldKey(url, spaceId);
  if (held && held.key !== key) {
    const heldView = await readWithHeldKey(ctx, url, held);
    if (heldView) {
      const me = heldView.participants.find((p) => p.participantId === held.participantId);
      // A configuration directory of its own remembers no server: its line names this one.
      const elsewhere = ownProfile(
        commandLine('space use', {
          args: [verbatim(spaceId)],
          options: {
            '--key': verbatim('-'),
            ...(url === DEFAULT_URL ? {} : { '--url': verbatim(shellWord(url)) }),
          },
        }),
        'To keep both, save the other in a configuration directory of its own',
      );
      throw new CliError(
        `this machine holds a working ${held.role} key for "${heldView.name}"${me ? ` (${me.name})` : ''}: saving another in its place would lose it`,
        {
          exitCode: ExitCode.conflict,
          hint:
            held.role === 'owner'
              ? `${elsewhere}.`
              : `${elsewhere}; or leave first with \`${suggest(ctx, 'leave', { space: held, always: true })}\`.`,
          details: { spaceId, participantId: held.participantId },
        },
      );
    }
  }
  const already = held?.key === key;
  // Saved under this spelling of the server; one saved under another (`localhost`, `127.0.0.1`)
  // goes in the same write, or the dead key it is replacing would stay the default there.
  ctx.saveSpace(space, { url, alongside: (file) => forgetUnderAliases(file, url, spaceId) });
  const as = view.participants.find((p) => p.participantId === you.participantId)?.name;
  const replaced = held && !already ? ', in place of the one that no longer works' : '';
  ctx.out.success(
    `${already ? 'Already saved: your' : 'Saved your'} ${you.role} key for ${ctx.out.c.bold(name)}${as ? `, as ${as}` : ''}${replaced}`,
  );
  if (you.status === 'muted') ctx.out.warn('you are muted there: you may read, but not send, create or lock');
  return { ...space, url, savedAt: new Date().toISOString(), alreadySaved: already };
}

/**
 * The key as given, ready to send: without the blanks and the byte-order mark around it, its hex
 * in lower case (as the server hands keys out). What cannot be a key (a line break inside, a
 * character beyond visible ASCII: a pasted `“quote”`, a JSON document) is a usage error here,
 * rather than a request that could not carry it.
 */
function keyGiven(text: string, piped: boolean): string {
  const key = text.replace(/^\uFEFF/, '').trim();
  const usage = (message: string) =>
    new UsageError(
      message,
      'Give the owner or participant key alone: `convene space use SPACE_ID --key KEY` (or `--key -` to pipe it in; is the variable set?). Nothing was saved.',
    );
  if (key === '')
    throw usage(piped ? 'nothing came on stdin: no key to save' : '--key is empty: no key to save');
  if (/^[0-9a-f]{64}$/i.test(key)) return key.toLowerCase();
  if (!/^[\x21-\x7e]+$/.test(key)) {
    throw usage(
      'that is not a space key: a key is one word of visible ASCII (64 hex characters), and this holds a line break, a space or another character',
    );
  }
  return key;
}

/**
 * The space a key is given for, and the server to ask: its whole id (or the id in an invitation
 * link, whose server is asked unless --url or CONVENE_URL names one), or a space saved here, by
 * name or the start of its id. Anything else names nothing yet: only the id can.
 */
function spaceOf(ctx: Context, reference: string): { spaceId: string; url: string } {
  if (isUuid(reference)) return { spaceId: reference.toLowerCase(), url: ctx.url };
  const linkServer = serverOfLink(reference);
  if (linkServer) {
    let spaceId: string | undefined;
    try {
      spaceId = parseInvitationLink(reference).spaceId;
    } catch {
      // Not an invitation link: said below, as any reference that names no space.
    }
    if (spaceId) return { spaceId, url: linkTarget(ctx, linkServer, 'the key').url };
  }
  const named = linkServer
    ? undefined
    : find(Object.values(ctx.host().spaces), reference, {
        noun: 'saved space',
        id: (s) => s.spaceId,
        name: (s) => s.name,
      });
  if (named) return { spaceId: named.spaceId, url: ctx.url };
  throw new UsageError(
    'with --key, name the space by its whole id: a name, or the start of an id, names only the spaces saved here',
    'The id is the `spaceId` of the space (`hub.spaces.create` returns it, and it is in every link to the space). Nothing was saved.',
  );
}

/** Removes the key of `spaceId` saved under another spelling of the server `url`, and its default. */
function forgetUnderAliases(file: StoreFile, url: string, spaceId: string): void {
  for (const [other, host] of Object.entries(file.hosts)) {
    if (other === hostKey(url) || !host.spaces[spaceId] || !sameServerAs(other, url)) continue;
    delete host.spaces[spaceId];
    if (host.defaultSpace === spaceId) delete host.defaultSpace;
  }
}

/** What the server's refusal of a given key says to whoever gave it; nothing was saved. */
function refusedKey(error: unknown, spaceId: string, url: string): unknown {
  if (isSpaceClosed(error)) {
    return new CliError(`space ${spaceId} is over: ${serverWords(error as ConveneError)}`, {
      exitCode: ExitCode.conflict,
      hint: 'Its keys no longer work; nothing was saved.',
      cause: error,
    });
  }
  if (error instanceof AuthenticationError) {
    const gone = error.code === 'participant_removed' || error.code === 'participant_left';
    return new CliError(`${url} does not take this key for space ${spaceId}: ${serverWords(error)}`, {
      exitCode: ExitCode.auth,
      hint: gone
        ? 'The key was real, but its seat is gone: join again with an invitation (`convene join LINK`). Nothing was saved.'
        : 'A space key is its owner’s or a participant’s (64 hex characters), for this space on this server (--url or CONVENE_URL). Nothing was saved.',
      cause: error,
    });
  }
  if (error instanceof NotFoundError) {
    return new CliError(`no space ${spaceId} at ${url}`, {
      exitCode: ExitCode.notFound,
      hint: 'Check the id, and the server (--url or CONVENE_URL). Nothing was saved.',
      cause: error,
    });
  }
  return error;
}
