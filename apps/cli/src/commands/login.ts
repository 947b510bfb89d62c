import type { Command } from '@commander-js/extra-typings';
import { ConveneError, LinkDeniedError, type Session } from '@convene/sdk';
import { type App, examples } from '../app';
import type { Context } from '../lib/context';
import { CliError, UsageError } from '../lib/errors';
import { ExitCode, stoppedBy } from '../lib/exit-codes';
import { readStdin } from '../lib/input';
import { checkedAnswer, ZAnswers } from '../lib/not-convene';
import { sayOutages } from '../lib/outage';
import { required, secretFromStdin } from '../lib/prompts';
import { shellWord } from '../lib/quote';
import { relative, when } from '../lib/render';
import { cliTokenName, type Revocation, revokeMintedToken, tokensStartingLike } from '../lib/tokens';

export function registerLogin(program: Command, app: App): void {
  program
    .command('login')
    .summary('link this terminal to your account (browser), or log in with a password')
    .description(
      'Link this terminal to your Convene account, so the spaces you create or join show on your ' +
        'dashboard (spaces themselves never need an account). By default it prints a URL and a ' +
        'code, opens the browser when there is one, and waits until you approve there. ' +
        '--with-token reads a usr_ token (minted on the dashboard) from stdin instead, and saves it ' +
        'once the server accepts it. ' +
        '--password logs in with email and password: the dashboard session that ' +
        '`convene token …` needs; it mints a token unless one of this account is saved (one of ' +
        'another account is replaced, and stays valid on the server). A token convene minted ' +
        'earlier that a new login replaces is revoked with that session (best effort: the new ' +
        'token is saved either way).',
    )
    .option('--with-token', 'read a usr_ token from stdin')
    .option('--password', 'log in with email and password (asked for; the password may be piped)')
    .option('--email <email>', 'the account’s email: a password login, as with --password')
    .addHelpText(
      'after',
      examples(
        'convene login',
        'echo "$MY_CONVENE_TOKEN" | convene login --with-token',
        'convene login --password --email ada@example.com',
        'printf "%s" "$PASSWORD" | convene login --password --email ada@example.com',
      ),
    )
    .action(async (options, command) => {
      const ctx = app.context(command);
      // An email is a password login's: the browser's flow and a token have none to take.
      const password = options.password || options.email !== undefined;
      if (options.withToken && password) {
        throw new UsageError(
          `--with-token and ${options.password ? '--password' : '--email'} cannot be used together`,
        );
      }
      if (options.withToken) return loginWithToken(ctx);
      if (password) return loginWithPassword(ctx, options.email);
      return loginWithBrowser(ctx);
    });
}

async function loginWithBrowser(ctx: Context): Promise<void> {
  const { out } = ctx;
  // The token's name once approved, shown on the approval page too.
  // Its wait for the human may last: a long Retry-After is waited out, not a reason to stop.
  const link = await ctx.hub(undefined, { longLived: true }).link.start({ agentName: cliTokenName() });
  // Nothing is shown, nor waited for, of a start that is not Convene's: its poll would never end.
  checkedAnswer(ZAnswers.linkStarted, link, ctx.url);
  const started = {
    userCode: link.userCode,
    verificationUri: link.verificationUri,
    verificationUriComplete: link.verificationUriComplete,
    expiresIn: link.expiresIn,
  };
  if (out.mode.json) out.jsonLine(started);
  else {
    // Both on stdout: whoever runs this (a person, or an agent for its person) needs them.
    out.line(`Open this page and approve the code ${out.c.bold(link.userCode)}:`);
    out.line(`  ${link.verificationUriComplete}`);
  }
  if (out.mode.interactive) {
    // Best effort: a terminal without a browser (SSH, a container) still has the URL above.
    // Loaded here, by the one command that opens a browser: ten packages every other command
    // would load at its start.
    import('open').then(({ default: open }) => open(link.verificationUriComplete)).catch(() => {});
  }
  ctx.handlesInterrupt = true;
  const waiting = 'Waiting for you to approve in the browser';
  const spinner = out.spinner(waiting);
  let token: string;
  try {
    token = await link.wait({
      signal: ctx.signal,
      ...sayOutages(spinner, ctx.url, waiting, link.interval * 1000),
    });
  } catch (error) {
    spinner.fail('Not linked');
    if (ctx.signal.aborted) {
      throw new CliError('stopped waiting for the browser', {
        exitCode: stoppedBy(ctx.signal).exitCode,
        hint: 'Nothing was linked: run `convene login` again (a new code).',
      });
    }
    if (error instanceof LinkDeniedError) {
      throw new CliError('the link request was refused in the browser', {
        exitCode: ExitCode.auth,
        hint: 'Run `convene login` again if that was a mistake.',
      });
    }
    if (error instanceof ConveneError && (error.status === 410 || error.status === 404)) {
      throw new CliError('the link request expired or was already used', {
        exitCode: ExitCode.auth,
        hint: 'Run `convene login` again.',
      });
    }
    throw error;
  }
  const replaced = await saveToken(ctx, checkedAnswer(ZAnswers.userToken, token, ctx.url), { minted: true });
  spinner.stop(`Logged in to ${ctx.url}`);
  const linked = { url: ctx.url, prefix: token.slice(0, 8), ...replacedField(replaced) };
  // With --json, a second line after the one that started the flow: stdout stays NDJSON.
  if (out.mode.json) out.jsonLine(linked);
  else
    out.result(linked, {
      human: () => {
        reportReplaced(ctx, replaced);
        out.hint('Spaces you create or join from now on are linked to your dashboard.');
      },
    });
}

async function loginWithToken(ctx: Context): Promise<void> {
  const { out } = ctx;
  const token = await secretFromStdin(out, {
    message: 'Paste your usr_ token',
    usage: 'echo TOKEN | convene login --with-token',
  });
  if (token === '') {
    // `echo "$UNSET_VARIABLE" | convene login --with-token` pipes an empty line.
    throw new UsageError(
      'nothing came on stdin: no token to save',
      'Pipe the token in: echo "$TOKEN" | convene login --with-token (is the variable set?).',
    );
  }
  if (!/^usr_\S+$/.test(token)) {
    throw new UsageError(
      'that is not a usr_ token',
      'Mint one on the dashboard, or with `convene token create`.',
    );
  }
  // Checked before it is saved: a mistyped or revoked token would otherwise link nothing, silently
  // (the server ignores a token it does not know on creates and joins).
  ctx.using = { kind: 'server' };
  const refusal = await ctx.tokenRefusal(token);
  if (refusal) {
    throw new CliError(`${ctx.url} does not accept this token`, {
      exitCode: ExitCode.auth,
      cause: refusal,
      hint: 'It may be mistyped, revoked or expired, or from another server: mint a new one on the dashboard or with `convene token create`.',
    });
  }
  const replaced = await saveToken(ctx, token, { minted: false });
  out.result(
    { url: ctx.url, prefix: token.slice(0, 8), ...replacedField(replaced) },
    {
      human: () => {
        out.success(`Saved the token for ${ctx.url}: spaces you create or join are linked to your dashboard`);
        reportReplaced(ctx, replaced);
      },
    },
  );
}

/**
 * The email and password of an account (`login --password`, `signup`): the email from --email or
 * asked for, the password asked for on a terminal, else read from stdin. `twice` (a new password):
 * a terminal asks for it a second time, and for both again while the two differ, since a typo
 * nobody saw would lock the account's owner out.
 */
export async function emailAndPassword(
  ctx: Context,
  emailOption: string | undefined,
  command: string,
  { minLength, twice = false }: { minLength?: number; twice?: boolean } = {},
): Promise<{ email: string; password: string }> {
  const { out } = ctx;
  // The email given, in the hints: the line they suggest is this one, with the password piped.
  const usage = `${command} --email ${emailOption ? shellWord(emailOption) : 'EMAIL'}`;
  const email = await required(out, emailOption, { message: 'Email', usage });
  // A new password too short is asked for again, rather than refused by the server after the
  // email was typed (a piped one is refused, exit 2).
  const check = (answer: string) =>
    minLength !== undefined && answer.length < minLength ? `at least ${minLength} characters` : undefined;
  const asked = async (): Promise<string> => {
    for (;;) {
      const first = await required(out, undefined, { message: 'Password', secret: true, usage, check });
      if (!twice) return first;
      const again = await required(out, undefined, { message: 'Password again', secret: true, usage });
      if (again === first) return first;
      out.warn('The two passwords differ: type it again, twice.');
    }
  };
  const password =
    process.stdin.isTTY || out.mode.interactive ? await asked() : (await readStdin()).replace(/\r?\n$/, '');
  if (!password) throw new UsageError('no password given', `Pipe it in: printf "%s" "$PASSWORD" | ${usage}`);
  // A new password piped too short is refused here, in words, before the server's 400.
  const short = check(password);
  if (short)
    throw new UsageError(`the password is too short: ${short}`, 'Pick a longer one, and pipe it in again.');
  return { email, password };
}

async function loginWithPassword(ctx: Context, emailOption: string | undefined): Promise<void> {
  const { email, password } = await emailAndPassword(ctx, emailOption, 'convene login --password');
  ctx.using = { kind: 'server' };
  let session: Session;
  try {
    session = await ctx.hub().auth.login({ email, password });
  } catch (error) {
    if (error instanceof ConveneError && error.status === 401) {
      throw new CliError('wrong email or password', {
        exitCode: ExitCode.auth,
        cause: error,
        hint: 'Check them, or create an account with `convene signup`.',
      });
    }
    throw error;
  }
  await keepSession(ctx, session, 'Logged in to');
}

/**
 * Keeps the dashboard session of a password login or a signup, and makes sure this terminal has a
 * usr_ token of that account (minting one), then says so. `did` starts the status line.
 */
export async function keepSession(ctx: Context, session: Session, did: string): Promise<void> {
  const { out } = ctx;
  // A session from login or signup always carries its human and expiry.
  const { token, user, expiresAt } = checkedAnswer(ZAnswers.session, session, ctx.url);
  ctx.store.updateHost(ctx.url, (host) => {
    host.session = { token, expiresAt, user: { id: user.id, email: user.email, name: user.name } };
  });
  // The session manages tokens; a usr_ token is what links new spaces to the dashboard. A token of
  // this account already saved is kept, so a second login mints none (and replaces nothing). One of
  // another account (an earlier login as someone else) would link this account's spaces to that
  // one's dashboard: it is replaced like any other (saveToken), and a revoked one of this account too.
  const saved = ctx.host().userToken;
  const tokens = await ctx.session().tokens.list();
  const own = saved !== undefined && tokensStartingLike(tokens, saved).some((t) => !t.revoked);
  let minted: { prefix: string; name: string } | undefined;
  let replaced: Replaced | undefined;
  if (!own) {
    const created = await ctx.session().tokens.create({ name: cliTokenName(tokens.map((t) => t.name)) });
    replaced = await saveToken(ctx, checkedAnswer(ZAnswers.userToken, created.token, ctx.url), {
      minted: true,
    });
    minted = { prefix: created.prefix, name: created.name };
  }
  out.result(
    {
      url: ctx.url,
      user,
      expiresAt,
      ...(minted ? { tokenPrefix: minted.prefix, tokenName: minted.name } : {}),
      ...replacedField(replaced),
    },
    {
      human: () => {
        out.success(
          `${did} ${ctx.url} as ${out.c.bold(user.email)} (session until ${when(expiresAt)}, ${relative(expiresAt)})`,
        );
        if (minted)
          out.hint(
            `Minted the token ${minted.prefix}… (${minted.name}) for this terminal: new spaces are linked to your dashboard.`,
          );
        reportReplaced(ctx, replaced);
      },
    },
  );
}

/** The token a login replaced, and whether convene revoked it (it does only for one it minted). */
interface Replaced {
  prefix: string;
  revocation: Revocation | undefined;
}

/**
 * Saves the token; `minted`: convene obtained it, so `logout` revokes it. A token convene minted
 * earlier that this one replaces is revoked on the server (best effort, with the dashboard
 * session): nobody else holds it, and once replaced here nothing would ever revoke it. The new
 * token is saved first, whatever becomes of the old one.
 */
async function saveToken(
  ctx: Context,
  token: string,
  { minted }: { minted: boolean },
): Promise<Replaced | undefined> {
  const previous = ctx.store.updateHost(ctx.url, (host) => {
    const old = { token: host.userToken, minted: host.userTokenMinted === true };
    host.userToken = token;
    // The same token given again stays convene's to revoke if it was.
    host.userTokenMinted = minted || (old.token === token && old.minted);
    return old;
  });
  if (previous.token === undefined || previous.token === token) return undefined;
  const prefix = previous.token.slice(0, 8);
  if (!previous.minted) return { prefix, revocation: undefined };
  return { prefix, revocation: await revokeMintedToken(ctx, previous.token) };
}

/** The replaced token in a login's --json result. */
function replacedField(replaced: Replaced | undefined) {
  if (!replaced) return {};
  const { prefix, revocation } = replaced;
  return {
    replacedToken: {
      prefix,
      revoked: revocation?.revoked ?? false,
      ...(revocation?.problem ? { problem: revocation.problem } : {}),
    },
  };
}

function reportReplaced(ctx: Context, replaced: Replaced | undefined): void {
  if (!replaced) return;
  const { out } = ctx;
  const shown = `${replaced.prefix}…`;
  if (!replaced.revocation) {
    out.info(`It replaces the token ${shown}, given with --with-token, which stays valid on the server.`);
  } else if (replaced.revocation.revoked) {
    out.info(`Revoked the token ${shown} it replaces on the server.`);
  } else {
    out.warn(
      `Saved the new token, but could not revoke the token ${shown} it replaces on the server: ${replaced.revocation.problem}`,
    );
  }
}
