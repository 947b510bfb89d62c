import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { SpaceClient } from '@convene/sdk';
import type { Context } from './context';
import { keyNoLongerTaken } from './errors';
import type { StoredSpace } from './store';

/**
 * How another seat in a space is kept on this machine: in a credential file of its own, in a
 * directory other than the one this run uses (an example that named it would fail the same way).
 * `command` is what is run there (`convene join …`), after `lead`, which says what it is for.
 */
export function ownProfile(
  command: string,
  lead = 'To join as someone else here, give them their own configuration directory',
): string {
  const current = process.env.XDG_CONFIG_HOME ? resolve(process.env.XDG_CONFIG_HOME) : undefined;
  const other = ['ada', 'grace'].find((name) => current !== join(homedir(), '.config', name));
  return `${lead}, e.g. \`XDG_CONFIG_HOME=~/.config/${other} ${command}\``;
}

/**
 * The space as the key saved for it reads it; undefined when the server no longer takes that key
 * (left, kicked, the space closed or gone). A key still taken is a seat in the space: one key per
 * space is kept, so a command that would save another in its place must not, since it would be lost.
 */
export async function readWithHeldKey(
  ctx: Context,
  url: string,
  held: StoredSpace,
): Promise<Awaited<ReturnType<SpaceClient['get']>> | undefined> {
  try {
    return await ctx.hub(url).space(held.spaceId, held.key).get();
  } catch (error) {
    if (keyNoLongerTaken(error)) return undefined;
    throw error;
  }
}
