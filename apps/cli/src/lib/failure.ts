import {
  AbortError,
  ConnectionError,
  ConveneError,
  LockedError,
  RateLimitError,
  TimeoutError,
} from '@convene/sdk';
import type { Context } from './context';
import { CliError } from './errors';
import { ExitCode } from './exit-codes';

/**
 * Turns whatever a command threw into a CliError: what went wrong (the server's own words), the
 * exit code, and what to try next given what the command was using (a space key, the dashboard
 * session, or nothing).
 */
export function explain(error: unknown, ctx: Context): CliError {
  if (error instanceof CliError) return error;
  if (error instanceof ConnectionError || error instanceof TimeoutError) {
    return new CliError(`cannot reach ${ctx.url}: ${error.message}`, {
      hint: ctx.urlIsExplicit
        ? 'Is the server running? `convene doctor` checks the connection.'
        : 'Start a server with `convene serve`, or point at one with --url or CONVENE_URL.',
      cause: error,
    });
  }
  if (error instanceof AbortError || (error instanceof Error && error.name === 'AbortError')) {
    return new CliError('interrupted', { exitCode: ExitCode.interrupted });
  }
  if (error instanceof ConveneError) return fromStatus(error, ctx);
  const message = error instanceof Error ? error.message : String(error);
  return new CliError(message, {
    hint: 'This looks like a bug in convene; please report it with the command you ran.',
    cause: error,
  });
}

function fromStatus(error: ConveneError, ctx: Context): CliError {
  const message = error.message;
  const using = ctx.using;
  const spaceName = using.kind === 'space' ? `"${using.space.name}"` : 'this space';
  switch (error.status) {
    case 401:
      if (using.kind === 'session') {
        return new CliError(message, {
          exitCode: ExitCode.auth,
          hint: 'Log in again with `convene login --password`.',
        });
      }
      if (using.kind === 'space') {
        return new CliError(`${message} (${spaceName})`, {
          exitCode: ExitCode.auth,
          hint:
            using.space.role === 'participant'
              ? 'The key no longer works if you left, were removed, or the space closed or expired. Join again with `convene join LINK`.'
              : 'The owner key stops working when the space closes or expires. Create a new one with `convene space create NAME`.',
        });
      }
      if (using.kind === 'server') {
        return new CliError(message, {
          exitCode: ExitCode.auth,
          hint: 'Your token may have been revoked: run `convene login` again.',
        });
      }
      return new CliError(message, { exitCode: ExitCode.auth, hint: 'Check the key you passed.' });
    case 403:
      return new CliError(message, {
        exitCode: ExitCode.auth,
        hint: 'The owner decides who may send and edit (`convene participants` shows your status).',
      });
    case 404:
      return new CliError(message, {
        exitCode: ExitCode.notFound,
        hint:
          using.kind === 'space'
            ? `Check the name or id (\`convene participants\`, \`convene artifact list\`).`
            : 'Check the id, and that --url points at the right server.',
      });
    case 409:
      return new CliError(message, {
        exitCode: ExitCode.conflict,
        hint: /closed/.test(message)
          ? `${spaceName} is closed for good; \`convene space list\` shows the others.`
          : 'The state changed meanwhile; look again and retry.',
        details: detailsOf(error),
      });
    case 410:
      return new CliError(message, { exitCode: ExitCode.error, hint: 'Start over.' });
    case 423: {
      const locked = error instanceof LockedError ? error : undefined;
      return new CliError(message, {
        exitCode: ExitCode.conflict,
        hint: locked?.lockExpiresAt
          ? `The lock lapses at ${locked.lockExpiresAt} unless its holder keeps it.`
          : 'Take the lock first with `convene artifact lock ARTIFACT`.',
        details: detailsOf(error),
      });
    }
    case 429: {
      const wait = error instanceof RateLimitError ? error.retryAfter : undefined;
      return new CliError(message, {
        hint: wait ? `Try again in ${wait} s.` : 'Try again in a minute.',
      });
    }
    default:
      if (error.status !== undefined && error.status >= 500) {
        return new CliError(`the server failed: ${message}`, {
          hint: 'Try again; `convene doctor` checks the server.',
        });
      }
      return new CliError(message, { exitCode: ExitCode.error, details: detailsOf(error) });
  }
}

function detailsOf(error: ConveneError): Record<string, unknown> {
  const body = error.body;
  if (!body || typeof body !== 'object') return {};
  const { error: _message, ...rest } = body as Record<string, unknown>;
  return rest;
}
