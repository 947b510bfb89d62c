import type { Context } from './context';
import { explain } from './failure';

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
    // The server keeps a token's first characters beside its hash: what identifies it here.
    const matches = (await session.tokens.list()).filter((t) => token.startsWith(t.prefix));
    if (matches.length !== 1) {
      return {
        revoked: false,
        problem: `${matches.length ? 'several' : 'none'} of your account's tokens start like it; ${dashboard}`,
      };
    }
    if (!matches[0]!.revoked) await session.tokens.revoke(matches[0]!.id);
    return { revoked: true };
  } catch (error) {
    return { revoked: false, problem: `${explain(error, ctx).message}; ${dashboard}` };
  }
}
