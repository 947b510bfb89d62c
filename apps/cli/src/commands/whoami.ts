import type { Command } from '@commander-js/extra-typings';
import { AuthenticationError, ConnectionError, ConveneError, type ParticipantView } from '@convene/sdk';
import { type App, examples } from '../app';
import type { Context } from '../lib/context';
import { CliError, isSpaceClosed, spaceOver } from '../lib/errors';
import { ExitCode } from '../lib/exit-codes';
import { UNKNOWN_KEY } from '../lib/failure';
import { inline } from '../lib/output';
import { relative, youAre } from '../lib/render';
import type { StoredSpace } from '../lib/store';
import { envTokenHint, tokensStartingLike } from '../lib/tokens';

export function registerWhoami(program: Command, app: App): void {
  program
    .command('whoami')
    .summary('who you are on this server: account, token, default space')
    .description(
      'Show what convene holds for this server, checked with the server: the account of the ' +
        'dashboard session, the usr_ token (saved, or CONVENE_TOKEN) and whether it works, and the ' +
        'default space with who you are in it (your name, role, and whether a human or an agent). ' +
        'No account is needed: spaces work with their keys alone. Exits 0 when there is something ' +
        'to show (an account, or keys of spaces); 4 when there is nothing (not logged in, no space ' +
        'keys here), or when the token it would use does not work and no session is there. With -q, ' +
        'the account’s email, or, not logged in, your participant id in the default space.',
    )
    .addHelpText('after', examples('convene whoami', 'convene whoami --json | jq .user.email'))
    .action(async (_options, command) => {
      const ctx = app.context(command);
      const host = ctx.host();
      const token = ctx.userToken();
      const stored = host.session;
      let user = stored?.user;
      // null: not checked, the server not answering (down, or its database away): what is saved
      // here is shown, as for the default space, rather than an error for the whole command.
      let sessionValid: boolean | null =
        stored !== undefined && new Date(stored.expiresAt).getTime() > Date.now();
      let unanswered: string | undefined;
      if (sessionValid) {
        try {
          user = await ctx.session().me({ maxRetries: 0, timeoutMs: 3000 });
        } catch (error) {
          if (error instanceof AuthenticationError) sessionValid = false;
          else {
            unanswered = notAnswered(error);
            sessionValid = null;
          }
        }
      }
      const source = ctx.env.CONVENE_TOKEN ? 'CONVENE_TOKEN' : 'saved';
      let tokenValid: boolean | null = false;
      if (token && unanswered) tokenValid = null;
      else if (token)
        try {
          tokenValid = await ctx.userTokenWorks(token);
        } catch (error) {
          unanswered = notAnswered(error);
          tokenValid = null;
        }
      // The server names a token's account only to a dashboard session, and only its own tokens.
      const known =
        token && tokenValid && sessionValid
          ? tokensStartingLike(await ctx.session().tokens.list(), token)[0]
          : undefined;
      const space = host.defaultSpace ? host.spaces[host.defaultSpace] : undefined;
      // Who you are in the default space: what someone with space keys alone (never logged in)
      // has to know, and the one thing the credential file does not hold (names are the server's).
      const standing = space ? await standingIn(ctx, space) : undefined;
      // Every field always there, null when there is none (not logged in, no default space), as
      // `artifact diff --json` has `"from": null`: one shape for a script to read.
      const result = {
        url: ctx.url,
        user: user ?? null,
        session: stored ? { expiresAt: stored.expiresAt, valid: sessionValid } : null,
        userToken: token
          ? {
              prefix: token.slice(0, 8),
              source,
              valid: tokenValid,
              ...(known ? { name: known.name, id: known.id } : {}),
            }
          : null,
        defaultSpace:
          space && standing
            ? {
                spaceId: space.spaceId,
                name: space.name,
                role: space.role,
                participantId: space.participantId,
                state: standing.state,
                participant: standing.me ?? null,
              }
            : null,
        spaces: Object.keys(host.spaces).length,
      };
      const { out } = ctx;
      out.result(result, {
        // Not logged in, the id of who you are in the default space: -q printed nothing.
        quiet: () => user?.email ?? space?.participantId,
        human: () =>
          out.fields([
            ['server', ctx.url],
            [
              'account',
              user
                ? `${user.name ? `${user.name} ` : ''}<${user.email}>`
                : tokenValid
                  ? 'linked by the token (the server names accounts to a dashboard session only)'
                  : 'none: not logged in (spaces work without an account; `convene login` links them to your dashboard)',
            ],
            [
              'session',
              stored
                ? sessionValid === null
                  ? `${unanswered}, ends ${relative(stored.expiresAt)}`
                  : sessionValid
                    ? `valid, ends ${relative(stored.expiresAt)}`
                    : 'expired: `convene login --password`'
                : undefined,
            ],
            [
              'token',
              token
                ? `${token.slice(0, 8)}… (${source === 'saved' ? 'saved' : 'from CONVENE_TOKEN'}), ${
                    tokenValid === null
                      ? unanswered
                      : !tokenValid
                        ? 'not valid (revoked, expired or unknown)'
                        : known && user
                          ? `valid: "${known.name}" of ${user.email}`
                          : sessionValid && user
                            ? `valid, not one of ${user.email}’s`
                            : 'valid'
                  }`
                : 'none',
            ],
            [
              'space',
              space && standing
                ? `${inline(space.name)} (${space.role}, default${standing.state === 'open' ? '' : `; ${standing.said}`})`
                : result.spaces > 0
                  ? 'no default: `convene space use NAME` picks one'
                  : undefined,
            ],
            ['you are', standing?.me ? youAre(standing.me) : undefined],
            ['spaces', `${result.spaces} with keys for this server on this machine`],
          ]),
      });
      if (token && tokenValid === false) {
        const which = source === 'saved' ? 'the saved token' : 'the token in CONVENE_TOKEN';
        const hint =
          source === 'saved'
            ? 'Log in again with `convene login` (or `convene logout` to forget it).'
            : envTokenHint(sessionValid === true);
        if (!sessionValid) {
          throw new CliError(`${which} does not work on ${ctx.url}`, { exitCode: ExitCode.auth, hint });
        }
        out.warn(`${which[0]!.toUpperCase()}${which.slice(1)} does not work here. ${hint}`);
      }
      // Space keys are an identity of their own: with them, not being logged in is what is shown
      // (the account line), not a failure. With neither, there is nobody to show.
      // Keys for another server (an earlier `serve --port`, this machine as 127.0.0.1): with none
      // here, the likelier cause of nothing to show.
      const elsewhere = result.spaces === 0 ? ctx.keysElsewhereHint() : undefined;
      if (!token && sessionValid === false && result.spaces === 0) {
        throw new CliError(`not logged in to ${ctx.url}, and no space keys for it here`, {
          exitCode: ExitCode.auth,
          hint:
            elsewhere ??
            'Run `convene login` (browser) or `convene login --password`; spaces need no account: `convene space create NAME` or `convene join LINK`.',
        });
      }
      if (elsewhere) out.hint(elsewhere);
    });
}

/**
 * Why the server's word could not be had (`not checked: no answer`), as the default space's line
 * says it: no answer, or an answer of a server in trouble (5xx). Anything else is thrown.
 */
function notAnswered(error: unknown): string {
  if (
    error instanceof ConnectionError ||
    (error instanceof ConveneError && !(error instanceof AuthenticationError) && (error.status ?? 0) >= 500)
  )
    return notChecked(error);
  throw error;
}

/** What could not be checked is said so: `not checked: no answer`, or with the server's error. */
const notChecked = (error: ConveneError): string =>
  `not checked: ${error instanceof ConnectionError ? 'no answer' : error.message}`;

/** You in the default space, as its participant list has you: what `space create` says of you. */
type Me = Pick<ParticipantView, 'name' | 'role' | 'isHuman' | 'isOwner' | 'status'>;

/**
 * The default space as the server has it now, and you in it. Closed, its key refused (you left or
 * were removed, or the server does not know it) or its server not answering are states to show, as `space list` shows them, not
 * failures of whoami: the rest of what it shows still holds.
 */
async function standingIn(
  ctx: Context,
  space: StoredSpace,
): Promise<{ state: 'open' | 'closed' | 'expired' | 'keyRefused' | 'unavailable'; said: string; me?: Me }> {
  try {
    // One attempt, a short wait: whoami answers from what is saved here; the server's word on the
    // space is extra, and a server away (a VPN down) must not hold it for minutes.
    const view = await ctx.hub().space(space.spaceId, space.key).get({ maxRetries: 0, timeoutMs: 3000 });
    ctx.refreshSpaceNames([view]);
    const found = view.participants.find((p) => p.participantId === space.participantId);
    const me = found
      ? {
          name: found.name,
          role: found.role,
          isHuman: found.isHuman,
          isOwner: found.isOwner,
          status: found.status,
        }
      : undefined;
    return { state: view.state, said: view.state, ...(me ? { me } : {}) };
  } catch (error) {
    if (!(error instanceof ConveneError)) throw error;
    if (isSpaceClosed(error)) {
      const over = spaceOver(error);
      return { state: over, said: over };
    }
    // Said as send and doctor say it: a key the server does not know is that (an owner key too,
    // whose owner can neither leave nor be removed), not a membership that ended.
    if (error instanceof AuthenticationError)
      return { state: 'keyRefused', said: keyRefused(error, space.role) };
    return { state: 'unavailable', said: notChecked(error) };
  }
}

/**
 * Why the server refuses the default space's key, by its code: one it does not know (as `send`
 * and `doctor` say it), a participant removed or gone; else as what stops a key of that role
 * working (a closed space is said apart).
 */
function keyRefused(error: ConveneError, role: StoredSpace['role']): string {
  switch (error.code) {
    case 'key_unknown':
      return `its key is ${UNKNOWN_KEY}`;
    case 'participant_removed':
      return 'its key is refused: the owner removed you';
    case 'participant_left':
      return 'its key is refused: you left';
    default:
      return role === 'owner' ? 'its key is refused' : 'its key is refused: you left or were removed';
  }
}
