import { userInfo } from 'node:os';
import type { Command } from '@commander-js/extra-typings';
import {
  ConveneError,
  type JoinedSpaceClient,
  NotFoundError,
  PendingJoin,
  parseInvitationLink,
} from '@convene/sdk';
import { type App, examples } from '../app';
import type { Context } from '../lib/context';
import { isUuid, normaliseUrl, sameServer } from '../lib/context';
import { CliError, keyNotKept, UsageError } from '../lib/errors';
import { ExitCode, stoppedBy } from '../lib/exit-codes';
import { explain, explained } from '../lib/failure';
import { checkName } from '../lib/input';
import { checkedAnswer, ZAnswers } from '../lib/not-convene';
import { sayOutages } from '../lib/outage';
import { inline } from '../lib/output';
import { required } from '../lib/prompts';
import { ownProfile, readWithHeldKey } from '../lib/seat';
import type { StoredSpace } from '../lib/store';
import { suggest } from '../lib/suggest';

/** The server an invitation link points at: what comes before `/join/` or `/hub/space/`. */
export function serverOfLink(link: string): string | undefined {
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    return undefined;
  }
  const match = url.pathname.match(/^(.*?)\/(?:join|hub\/space)\/[^/]+/);
  if (!match) return undefined;
  return normaliseUrl(`${url.origin}${match[1]}`);
}

/**
 * The server a command given a link asks: the link's (`linkServer`), but --url or CONVENE_URL
 * still win (a proxy, another address), and the server named so when there is no link. A
 * CONVENE_URL exported for another server (an earlier `serve --port`) wins silently too, and that
 * server refuses the link's key as unknown, which reads as a bad key: so a difference is said
 * before `what` (`this join`) is sent, with what sent it elsewhere.
 */
export function linkTarget(
  ctx: Context,
  linkServer: string | undefined,
  what: string,
): { url: string; redirected?: { link: string; by: string } } {
  const url = linkServer && !ctx.urlIsExplicit ? linkServer : ctx.url;
  if (!linkServer || sameServer(linkServer, url)) return { url };
  const redirected = { link: linkServer, by: ctx.options.url !== undefined ? '--url' : 'CONVENE_URL' };
  ctx.out.warn(`The link names ${redirected.link}, but ${redirected.by} sends ${what} to ${url}.`);
  return { url, redirected };
}

export function registerJoin(program: Command, app: App): void {
  program
    .command('join')
    .argument(
      '[link-or-space]',
      'an invitation link (humanLink or agentLink), or a space’s whole id with --key',
    )
    .usage('LINK | SPACE --key KEY [options]')
    .summary('join a space with an invitation; waits through approval')
    .description(
      'Join a space with an invitation: its link (for people or for agents), or the space’s whole ' +
        'id (not the start of it: no space of it is kept here yet) and the invitation key. In a private space this waits until the owner approves you. The ' +
        'participant key is kept (0600) and the space becomes the default. Once in, it shows the ' +
        'space’s description and agenda. A link is joined at the server it names, unless --url or ' +
        'CONVENE_URL names another (a proxy): then it says so before joining. The next commands ' +
        'without --url go to the server it joined at.',
    )
    .option('-k, --key <key>', 'the invitation key (with a space id)')
    .option('-n, --name <name>', 'your display name (default: asked, or your user name)')
    .option('-r, --role <role>', 'a free-text label, e.g. "reviewer"')
    .option('--human', 'join as a human (default: an agent)')
    .addHelpText(
      'after',
      examples(
        'convene join "http://localhost:3000/join/3f2e…#key=…" --name Ada --human',
        'convene join 3f2e8c1a-5b7d-4e9f-a2c6-1d0b9e8f7a65 --key inv_… --name "Review bot" --role reviewer',
      ),
    )
    .action(async (target, options, command) => {
      const ctx = app.context(command);
      const { out } = ctx;
      checkName(options.name, '--name');
      const reference = await required(out, target, {
        message: 'Invitation link',
        usage: 'convene join LINK | SPACE --key KEY [options]',
      });
      const linkServer = serverOfLink(reference);
      if (!linkServer && !isUuid(reference) && looksLikeKey(reference)) {
        // Not repeated: error output ends up in logs and screenshots.
        throw new UsageError(
          'that is a key, not an invitation link',
          'Pass the link `convene invite` printed, or the space id with the invitation key: convene join SPACE_ID --key KEY.',
        );
      }
      if (!linkServer && !isUuid(reference)) {
        throw new UsageError(
          `"${reference}" is neither an invitation link nor a space id`,
          'Pass the link `convene invite` printed, or a space id with --key.',
        );
      }
      if (!linkServer && !options.key) {
        throw new UsageError(
          'joining by space id needs the invitation key',
          `convene join ${reference} --key KEY`,
        );
      }
      // Said again in the join's error, where it is the likely cause.
      const { url, redirected } = linkTarget(ctx, linkServer, 'this join');
      const invitation = linkServer
        ? invitationOf(reference)
        : { spaceId: reference, invitationKey: options.key! };
      // One key per space is kept: an owner key it would replace is worth more than a second seat.
      // Under whichever spelling of this server it was saved (`localhost`, `127.0.0.1`).
      const held = ctx.heldKey(url, invitation.spaceId);
      if (held?.role === 'owner') {
        throw new CliError(`you own "${held.name}" on this machine: joining would replace your owner key`, {
          exitCode: ExitCode.conflict,
          hint: `${ownProfile('convene join …')}.`,
        });
      }
      if (held) await refuseSecondSeat(ctx, url, held);
      const name =
        options.name ??
        (out.mode.interactive
          ? await required(out, undefined, {
              message: 'Your name in the space',
              default: userInfo().username,
              usage: 'convene join LINK --name NAME',
            })
          : userInfo().username);
      // Its wait for approval may last: a long Retry-After is waited out, not a reason to stop.
      const hub = ctx.hub(url, { longLived: true });
      const profile = {
        name,
        ...(options.role !== undefined ? { role: options.role } : {}),
        isHuman: options.human === true,
      };
      ctx.using = { kind: 'invitation', spaceId: invitation.spaceId };
      ctx.handlesInterrupt = true;
      const spinner = out.spinner(`Joining as ${name}`);
      const waiting = (pending: PendingJoin) => {
        const text = 'Waiting for the owner to approve you';
        spinner.message(text);
        return pending.wait({
          signal: ctx.signal,
          pollIntervalMs: POLL_INTERVAL_MS,
          // An approval can take hours, and the server may restart meanwhile.
          ...sayOutages(spinner, url, text, POLL_INTERVAL_MS),
        });
      };
      // A join still waiting from an earlier `convene join` is waited for again, not asked twice:
      // by the same link, or by another link of the space under the same name (a script that
      // asks the owner for a fresh link each run), which would leave the owner two requests of
      // one name, approve NAME refused as ambiguous, and the first waiting for ever.
      const saved = ctx.store.host(url).pendingJoins?.[invitation.spaceId];
      const earlier =
        saved && (saved.invitationKey === invitation.invitationKey || saved.name === name)
          ? saved
          : undefined;
      let member: JoinedSpaceClient;
      // Approved after a wait: until the key is saved, the join stays saved as waiting.
      let waited = false;
      try {
        if (earlier) {
          waited = true;
          member = await waiting(hub.pendingJoin(earlier));
        } else {
          const joined = await hub.join(
            invitation.spaceId,
            invitation.invitationKey,
            { ...profile, wait: false },
            { signal: ctx.signal },
          );
          if (joined instanceof PendingJoin) {
            // Saved only as a Convene server answers a join: a participant to wait for.
            checkedAnswer(ZAnswers.pendingJoin, { ...joined.toJSON() }, url);
            ctx.store.updateHost(url, (host) => {
              host.pendingJoins = {
                ...host.pendingJoins,
                [joined.spaceId]: {
                  spaceId: joined.spaceId,
                  invitationKey: joined.invitationKey,
                  participantId: joined.participantId,
                  ...(joined.pollToken ? { pollToken: joined.pollToken } : {}),
                  name,
                },
              };
            });
            waited = true;
            member = await waiting(joined);
          } else member = joined;
        }
      } catch (error) {
        spinner.fail('Not joined');
        if (ctx.signal.aborted) {
          throw new CliError('stopped waiting for approval', {
            // 130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP: a supervisor tells a stop from a refusal.
            exitCode: stoppedBy(ctx.signal).exitCode,
            hint: 'The owner can still approve you: run the same `convene join` again to keep waiting.',
          });
        }
        forgetPending(ctx, url, invitation.spaceId);
        // Not a wrong invitation: the owner refused this joiner while it waited (`reject`, or
        // `kick`). The server records either as a removal, but to the joiner it is one thing, a
        // request refused: said as that alone.
        if (isJoinRefused(error)) {
          throw new CliError('the owner refused your request to join', {
            exitCode: ExitCode.auth,
            hint: 'Ask the owner if that was a mistake; the same `convene join` asks again.',
            // The server's code (`join_refused`) and status reach --json from it, as every refusal's.
            cause: error,
          });
        }
        if (redirected) throw elsewhere(ctx, error, redirected, url);
        throw error;
      }
      // The participant the key belongs to (every join knows it), and the space as it is now. A
      // read that fails (the server gone a moment) shows the key: the participant exists.
      const read = await member.get({ signal: ctx.signal }).catch((error: unknown) => {
        const given = {
          spaceId: invitation.spaceId,
          role: 'participant',
          key: member.key,
          participantId: member.participantId,
        } as const;
        const answer = {
          spaceId: given.spaceId,
          participantId: given.participantId,
          participantPrivateKey: given.key,
        };
        spinner.fail();
        // Ctrl-C during the read: said as what stopped it, with its exit code (130), as anywhere.
        const stopped = ctx.signal.aborted ? stoppedBy(ctx.signal) : undefined;
        throw keyNotKept(
          given,
          answer,
          stopped
            ? `${stopped.said} while reading the space`
            : `reading the space failed: ${explain(error, ctx).message}`,
          error,
          { again: waited ? AGAIN_AFTER_APPROVAL : undefined, exitCode: stopped?.exitCode },
        );
      });
      const { participantId, key, ...view } = checkedAnswer(
        ZAnswers.joined,
        { participantId: member.participantId, key: member.key, spaceId: read?.spaceId, name: read?.name },
        url,
      );
      const { description, agenda } = read;
      // The next commands without --url go where this join went, where its key is saved (keepKey
      // remembers `url`): the server the link names, or the one --url or CONVENE_URL named
      // instead (a proxy, another address of it). A join still waiting is forgotten in the same write that keeps the key (until then, the
      // same `convene join` would wait for it again).
      const answer = { spaceId: view.spaceId, participantId, participantPrivateKey: key };
      try {
        ctx.keepKey(
          { spaceId: view.spaceId, name: view.name, role: 'participant', key, participantId },
          answer,
          {
            url,
            alongside: (_file, host) => {
              if (host.pendingJoins) delete host.pendingJoins[invitation.spaceId];
            },
            again: waited ? AGAIN_AFTER_APPROVAL : undefined,
          },
        );
      } catch (error) {
        spinner.fail();
        throw error;
      }
      // Joined and kept: from here Ctrl-C ends the run at once (its check of the token need not end).
      ctx.handlesInterrupt = false;
      spinner.stop(`Joined ${out.c.bold(view.name)} as ${name}`);
      await ctx.warnIfTokenIgnored('this membership', url);
      out.result(answer, {
        quiet: () => participantId,
        human: () => {
          // What the space is for, and its agenda: what `space create` says joiners are shown.
          out.fields([
            ['space', `${inline(view.name)} (${view.spaceId})`],
            ['description', description || undefined],
            ['agenda', agenda || undefined],
            ['participant', participantId],
            ['server', url],
          ]);
          out.hint('This space is now your default: `convene send "hello"`, `convene tail`.');
        },
      });
    });
}

/**
 * A participant key the server still takes means this person is in the space: joining again would
 * make a second participant of the same name (which the moderation verbs and `send -m` could not
 * tell apart) and replace the key here while the first participant stays. A dead key (left,
 * kicked, the space closed or gone) may be replaced.
 */
async function refuseSecondSeat(ctx: Context, url: string, held: StoredSpace): Promise<void> {
  const view = await readWithHeldKey(ctx, url, held);
  if (!view) return;
  const me = view.participants.find((p) => p.participantId === held.participantId);
  throw new CliError(
    `you are already in "${view.name}"${me ? ` as ${me.name}` : ''} on this machine: joining again would add a second participant and replace your key`,
    {
      exitCode: ExitCode.conflict,
      hint: `${ownProfile('convene join …')}; to join again under another name, leave first with \`${suggest(ctx, 'leave', { space: held, always: true })}\`.`,
      details: { spaceId: held.spaceId, participantId: held.participantId },
    },
  );
}

/**
 * A join that failed at another server than its link names: what failed, said with where the link
 * points and what sent it elsewhere, since that is the likely cause. The other server's answer
 * (an unknown key, no such space, no answer) would otherwise point at the invitation, which is
 * fine where the link points. The exit code and --json fields stay the failure's own.
 */
function elsewhere(
  ctx: Context,
  error: unknown,
  redirected: { link: string; by: string },
  url: string,
): CliError {
  const failure = explained(error, ctx);
  const { link, by } = redirected;
  // What a server says of an invitation it does not know (401, 404), which the link's would not.
  const refused = error instanceof ConveneError && (error.status === 401 || error.status === 404);
  const fix =
    by === 'CONVENE_URL'
      ? `unset CONVENE_URL (\`unset CONVENE_URL\`), or pass \`--url ${link}\``
      : `leave out --url, or pass \`--url ${link}\``;
  return new CliError(`${failure.message} (the link names ${link}, but ${by} sent the join to ${url})`, {
    exitCode: failure.exitCode,
    hint: `To join where the link points, ${fix}.${
      refused
        ? ` Only if ${url} is that same server under another address (a proxy) was the invitation itself refused: then ask the owner for a fresh one.`
        : failure.hint
          ? `\n${failure.hint}`
          : ''
    }`,
    details: failure.details,
    cause: failure.cause ?? error,
  });
}

/** The space and key of a link, or a usage error saying what is missing from it. */
function invitationOf(link: string): { spaceId: string; invitationKey: string } {
  try {
    return parseInvitationLink(link);
  } catch {
    throw new UsageError(
      `"${link}" is not a whole invitation link: its space id or key is missing`,
      'Paste the whole link `convene invite` printed, in quotes (its key follows `#key=` or `?key=`).',
    );
  }
}

function forgetPending(ctx: Context, url: string, spaceId: string): void {
  if (!ctx.store.host(url).pendingJoins?.[spaceId]) return;
  ctx.store.updateHost(url, (host) => {
    if (host.pendingJoins) delete host.pendingJoins[spaceId];
  });
}

/**
 * What a join approved after a wait says of running it again when its key was not kept: the join
 * is still saved as waiting, and the server gives an approved join's key again for 10 minutes
 * (JOIN_KEY_WINDOW_MS), so the same command gets it back.
 */
const AGAIN_AFTER_APPROVAL =
  'The same `convene join` run again within 10 minutes of the approval gets the key back.';

/** How often a waiting join asks whether it was approved. */
const POLL_INTERVAL_MS = 2000;

/** An invitation key (inv_…) or a 64-hex owner or participant key, given where a link goes. */
const looksLikeKey = (text: string): boolean => /^inv_\S+$/.test(text) || /^[0-9a-f]{64}$/i.test(text);

/**
 * Whether a join's wait ended because the owner refused it: the 404's code says so
 * (`join_refused`; its words may change), or, from a server older than error codes, its message
 * (`join request refused: …`), as the SDK reads it.
 */
export function isJoinRefused(error: unknown): boolean {
  if (!(error instanceof NotFoundError)) return false;
  if (error.code === 'join_refused') return true;
  const said = typeof error.body?.error === 'string' ? error.body.error : error.message;
  return said.replace(/^404 /, '').startsWith('join request refused');
}
