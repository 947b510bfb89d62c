import { existsSync } from 'node:fs';
import type { Command } from '@commander-js/extra-typings';
import { ConveneError } from '@convene/sdk';
import { type App, examples } from '../app';
import type { Context } from '../lib/context';
import { CliError, isSpaceClosed } from '../lib/errors';
import {
  closedHint,
  connectionState,
  deadKeyHint,
  forgetLine,
  isSpaceGone,
  plainHttp,
  serverWords,
  spaceGoneHint,
  speaksPlainHttp,
  unreachableHint,
} from '../lib/failure';
import { isNotConvene, notConvene } from '../lib/not-convene';
import { inline } from '../lib/output';
import { shellWord, verbatim } from '../lib/quote';
import { relative } from '../lib/render';
import { suggest } from '../lib/suggest';
import { envTokenHint } from '../lib/tokens';
import { VERSION } from '../version';

/** What a check that needs the server says when it does not answer: neither a tick nor a cross. */
const SERVER_DOWN = 'not checked: the server does not answer';

/** The API version this CLI speaks. */
const API_VERSION = '1';

interface Check {
  name: string;
  status: 'ok' | 'warn' | 'fail';
  detail: string;
  hint?: string;
}

export function registerDoctor(program: Command, app: App): void {
  program
    .command('doctor')
    .summary('check the server, the API version, your credentials and the clock')
    .description(
      'Check what convene needs: the server answers and speaks API version 1, the credential file ' +
        'is private, the token, session and default space key work, and this machine’s clock ' +
        'agrees with the server’s (lock expiries depend on it). Exits 1 if a check fails; a closed ' +
        'default space is a warning when other spaces are saved (`convene space use` picks one).',
    )
    .addHelpText(
      'after',
      examples('convene doctor', 'convene doctor --url https://convene.example.com --json'),
    )
    .action(async (_options, command) => {
      const ctx = app.context(command);
      // Its own check reports a credentials file others can read: no warning besides.
      ctx.store.warnIfOpen = undefined;
      ctx.store.warnIfSetAside = undefined;
      const checks = await runChecks(ctx);
      const { out } = ctx;
      out.result(
        { url: ctx.url, cli: VERSION, checks },
        {
          human: () => {
            for (const check of checks) {
              const mark =
                check.status === 'ok'
                  ? out.c.green('✓')
                  : check.status === 'warn'
                    ? out.c.yellow('!')
                    : out.c.red('✗');
              // A detail may quote an error of the system or the server, newlines and all
              // (OpenSSL's end with one): each check stays on its line.
              out.line(`${mark} ${out.c.bold(check.name)}: ${inline(check.detail)}`);
              if (check.hint) out.line(`  ${out.c.dim(inline(check.hint))}`);
            }
          },
        },
      );
      const failed = checks.filter((c) => c.status === 'fail');
      if (failed.length) {
        throw new CliError(
          `${failed.length} check${failed.length > 1 ? 's' : ''} failed: ${failed.map((c) => c.name).join(', ')}`,
        );
      }
    });
}

async function runChecks(ctx: Context): Promise<Check[]> {
  const checks: Check[] = [];
  // Read first: a file that cannot be read is one failed check, not the end of the others (which
  // then go on without it: the server of --url, CONVENE_URL or the default).
  const unreadable = ctx.store.readProblem();
  const hub = ctx.hub();
  const started = Date.now();
  let response: Response | undefined;
  try {
    ({ response } = await hub.health().withResponse());
    checks.push({ name: 'server', status: 'ok', detail: `${ctx.url} answers (${Date.now() - started} ms)` });
  } catch (error) {
    // Something that answers, but not as Convene does, is not "nothing listens"; nor is a server
    // that speaks plain HTTP where https:// was given.
    const other = isNotConvene(error)
      ? notConvene(error, ctx.url, { fromDoctor: true })
      : speaksPlainHttp(error, ctx.url)
        ? plainHttp(ctx.url)
        : undefined;
    checks.push({
      name: 'server',
      status: 'fail',
      detail: other?.message ?? `${ctx.url} ${connectionState(error)}: ${(error as Error).message}`,
      hint:
        other?.hint ??
        unreachableHint(ctx.url, ctx.urlIsExplicit, { fromDoctor: true, error, keysHere: ctx.keysHere() }),
    });
  }
  if (response) {
    const version = response.headers.get('api-version');
    checks.push(
      version === API_VERSION
        ? { name: 'API version', status: 'ok', detail: `${version}` }
        : {
            name: 'API version',
            status: 'fail',
            detail: `the server speaks ${version ?? 'no version'}, this CLI ${API_VERSION}`,
            hint: 'Is this a Convene server? Update convene or the server.',
          },
    );
    const date = response.headers.get('date');
    if (date) {
      // The Date header has whole seconds; round trip time bounds the rest.
      const skew = Math.round((new Date(date).getTime() + 500 - (started + Date.now()) / 2) / 1000);
      checks.push(
        Math.abs(skew) <= 30
          ? { name: 'clock', status: 'ok', detail: `within ${Math.max(1, Math.abs(skew))} s of the server` }
          : {
              name: 'clock',
              status: 'warn',
              detail: `${Math.abs(skew)} s ${skew > 0 ? 'behind' : 'ahead of'} the server`,
              hint: 'Lock and expiry times will look off; sync the clock (NTP).',
            },
      );
    }
  }

  const problems = ctx.store.permissionProblems();
  checks.push(
    unreadable
      ? {
          name: 'credentials file',
          status: 'fail',
          detail: unreadable.message,
          ...(unreadable.hint ? { hint: unreadable.hint } : {}),
        }
      : problems.length
        ? {
            name: 'credentials file',
            status: 'fail',
            detail: problems.join('; '),
            hint: `chmod 700 ${shellWord(ctx.store.dir)} && chmod 600 ${shellWord(ctx.store.file)}`,
          }
        : {
            name: 'credentials file',
            status: 'ok',
            detail: existsSync(ctx.store.file)
              ? `${ctx.store.file} (private)`
              : `${ctx.store.file} (none yet: made, private, when a key is saved)`,
          },
  );

  // Entries it cannot read, left out of every read: a warning, since the rest works.
  const setAside = unreadable ? [] : ctx.store.setAside();
  if (setAside.length) {
    const inPlace = setAside.filter((s) => !s.moved);
    const n = setAside.length;
    checks.push({
      name: 'credentials entries',
      status: 'warn',
      detail: `${n === 1 ? 'one entry' : `${n} entries`} convene cannot read, left out: ${setAside.map((s) => s.at).join(', ')}`,
      hint: inPlace.length
        ? 'The next change saved keeps them, as they are, under "unreadable" in the file: repair one and put it back where it stood, or delete it.'
        : 'They are kept, as they were, under "unreadable" in the file: repair one and put it back where its "at" says, or delete it.',
    });
  }
  if (unreadable) {
    const notChecked = 'not checked: the credentials file cannot be read';
    if (ctx.env.CONVENE_TOKEN) await checkToken(ctx, checks, response);
    else checks.push({ name: 'token', status: 'warn', detail: notChecked });
    checks.push({ name: 'default space', status: 'warn', detail: notChecked });
    return checks;
  }
  await checkToken(ctx, checks, response);
  const host = ctx.host();
  if (host.session) {
    const expired = new Date(host.session.expiresAt).getTime() <= Date.now();
    if (expired) {
      checks.push({ name: 'session', status: 'warn', detail: 'expired', hint: 'convene login --password' });
    } else if (!response) {
      checks.push({ name: 'session', status: 'warn', detail: SERVER_DOWN });
    } else {
      try {
        const me = await ctx.session().me();
        checks.push({
          name: 'session',
          status: 'ok',
          detail: `${me.email}, ends ${relative(host.session.expiresAt)}`,
        });
      } catch (error) {
        checks.push({
          name: 'session',
          status: 'fail',
          detail: (error as Error).message,
          hint: 'convene login --password',
        });
      }
    }
  }
  const space = host.defaultSpace ? host.spaces[host.defaultSpace] : undefined;
  if (space && !response) {
    checks.push({ name: 'default space', status: 'warn', detail: `${space.name}: ${SERVER_DOWN}` });
  } else if (space) {
    try {
      const view = await ctx.readSpace(hub.space(space.spaceId, space.key));
      // Muted: the key works, for reading; what it cannot do is said, as whoami says it.
      const muted = view.participants.some(
        (p) => p.participantId === space.participantId && p.status === 'muted',
      );
      checks.push({
        name: 'default space',
        status: 'ok',
        detail: `${view.name}: ${view.state}, your ${space.role} key works${muted ? ' (muted by the owner: you read, and cannot send, create documents or take locks)' : ''}`,
      });
    } catch (error) {
      const status = error instanceof ConveneError ? error.status : undefined;
      // A closed default space is no broken setup when other spaces are saved: one of them can be
      // the default (`space use`). With none, nothing here acts on a space any more.
      const others = Object.keys(host.spaces).length - 1;
      checks.push(
        isSpaceClosed(error)
          ? {
              name: 'default space',
              status: others > 0 ? 'warn' : 'fail',
              detail: `"${space.name}" is closed: its keys no longer work${others > 0 ? ` (${others} other space${others > 1 ? 's' : ''} saved here)` : ''}`,
              hint: `${closedHint(ctx, `"${space.name}"`, error as ConveneError, suggest(ctx, 'leave', { space, always: true }), others > 0)}; ${
                others > 0
                  ? `pick another with \`${suggest(ctx, 'space use', { args: [verbatim('SPACE')] })}\``
                  : `\`${suggest(ctx, 'space create', { args: [verbatim('NAME')] })}\` or \`convene join LINK\` for another`
              }.`,
            }
          : {
              name: 'default space',
              status: 'fail',
              detail: `${space.name}: ${error instanceof ConveneError ? serverWords(error) : (error as Error).message}`,
              ...(status === 401
                ? {
                    hint: deadKeyHint(ctx, error as ConveneError, space, `"${space.name}"`, {
                      fromDoctor: true,
                    }),
                  }
                : isSpaceGone(error)
                  ? { hint: spaceGoneHint(ctx.url, forgetLine(ctx, space)) }
                  : {}),
            },
      );
    }
  } else if (!space) {
    // Spaces kept here but none the default (it was left or forgotten): one of them can be.
    const saved = Object.keys(host.spaces).length;
    const elsewhere = saved > 0 ? undefined : ctx.keysElsewhereHint();
    checks.push(
      saved > 0
        ? {
            name: 'default space',
            status: 'ok',
            detail: `none (${saved} saved here)`,
            hint: `Pick one with \`${suggest(ctx, 'space use', { args: [verbatim('SPACE')] })}\` (\`${suggest(ctx, 'space list')}\` lists them).`,
          }
        : {
            name: 'default space',
            status: 'ok',
            detail: 'none yet for this server (`convene space create` or `convene join`)',
            ...(elsewhere ? { hint: elsewhere } : {}),
          },
    );
  }
  return checks;
}

/** Whether the token in use (saved, or CONVENE_TOKEN) works, asked of the server when it answers. */
async function checkToken(ctx: Context, checks: Check[], response: Response | undefined): Promise<void> {
  const token = ctx.userToken();
  const tokenSource = ctx.env.CONVENE_TOKEN ? '(CONVENE_TOKEN)' : '(saved)';
  const tokenWorks = token && response ? await ctx.userTokenWorks(token).catch(() => undefined) : undefined;
  checks.push(
    token
      ? tokenWorks === undefined
        ? {
            name: 'token',
            status: 'warn',
            detail: `${token.slice(0, 8)}… ${tokenSource}: ${response ? 'not checked: the server did not say' : SERVER_DOWN}`,
          }
        : tokenWorks === false
          ? {
              name: 'token',
              status: 'fail',
              detail: `${token.slice(0, 8)}… ${tokenSource} does not work: revoked, expired or unknown`,
              hint: ctx.env.CONVENE_TOKEN ? envTokenHint(ctx.hasSession()) : 'convene login',
            }
          : {
              name: 'token',
              status: 'ok',
              detail: `${token.slice(0, 8)}… ${tokenSource}, works`,
            }
      : {
          name: 'token',
          status: 'ok',
          detail: 'none: spaces you create are not linked to a dashboard (`convene login`)',
        },
  );
}
