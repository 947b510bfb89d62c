import { randomInt } from 'node:crypto';
import { hostname } from 'node:os';
import type { Context } from './context';
import { explain } from './failure';

/**
 * The listed tokens a `usr_` string may be. The server keeps each token's first characters
 * (`prefix`) beside its hash: the token itself starts with its prefix, and a shorter start (as
 * `token list` shows it) is a start of the prefix.
 */
export function tokensStartingLike<T extends { prefix: string }>(tokens: readonly T[], typed: string): T[] {
  return tokens.filter((t) =>
    typed.length >= t.prefix.length ? typed.startsWith(t.prefix) : t.prefix.startsWith(typed),
  );
}

/** Letters and digits nobody mistakes for one another (no 0/o, 1/l/i). */
const TAG_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

/**
 * The name of a token convene mints at a login: the host, and a tag random to this login,
 * `convene CLI on ada-laptop (k3f9x2)`. Named after the host alone, the tokens of two logins on
 * one host (two configuration directories: two people, or a person and an agent) had one name,
 * which `token revoke NAME` refuses as ambiguous. `taken`: names of the account's tokens, which
 * the new one does not repeat (in any case, as `token create` compares them).
 */
export function cliTokenName(taken: readonly string[] = []): string {
  const used = new Set(taken.map((name) => name.toLowerCase()));
  for (;;) {
    const tag = Array.from({ length: 6 }, () => TAG_ALPHABET[randomInt(TAG_ALPHABET.length)]).join('');
    const name = `convene CLI on ${hostname()} (${tag})`;
    if (!used.has(name.toLowerCase())) return name;
  }
}

/** What became of a token convene tried to revoke; `problem` says why it could not. */
export interface Revocation {
  revoked: boolean;
  problem?: string;
}

/**
 * Revokes a token convene minted, with the dashboard session (the only credential the server
 * revokes tokens for). Never throws: whoever asks (logout, a login replacing the token) forgets or
 * replaces the token here whatever the server says.
 */
export async function revokeMintedToken(ctx: Context, token: string): Promise<Revocation> {
  const dashboard = `revoke it on the dashboard (${ctx.url}/dashboard).`;
  if (!ctx.hasSession()) {
    return {
      revoked: false,
      problem: `that takes the dashboard session of \`convene login --password\`; ${dashboard}`,
    };
  }
  try {
    const session = ctx.session();
    const matches = tokensStartingLike(await session.tokens.list(), token);
    if (matches.length !== 1) {
      return {
        revoked: false,
        problem: `${matches.length ? 'several' : 'none'} of your account’s tokens start like it; ${dashboard}`,
      };
    }
    if (!matches[0]!.revoked) await session.tokens.revoke(matches[0]!.id);
    return { revoked: true };
  } catch (error) {
    return { revoked: false, problem: `${explain(error, ctx).message}; ${dashboard}` };
  }
}

/**
 * What to do about a CONVENE_TOKEN the server does not take: a new token, minted where that
 * works. `token create` takes the dashboard session of `login --password`; without one, it fails
 * too (exit 4), so the way there is said: `login --password` first, or `login` in the browser,
 * which saves a token of its own (one CONVENE_TOKEN would still override).
 */
export function envTokenHint(hasSession: boolean): string {
  return hasSession
    ? 'Mint a new one (`convene token create`, or the dashboard) and set CONVENE_TOKEN to it, or unset CONVENE_TOKEN.'
    : 'Unset CONVENE_TOKEN, or set it to a token that works: `convene login --password`, then `convene token create` mints one (or the dashboard does). `convene login` in the browser saves a token of its own, which CONVENE_TOKEN overrides while set.';
}

/** How the token commands know a token: its id, or its whole name (`find`, `hintName`). */
export const tokenNaming = {
  noun: 'token',
  id: (token: { id: string }) => token.id,
  name: (token: { name: string }) => token.name,
};
