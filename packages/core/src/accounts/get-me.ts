import type { TUserView } from '@convene/contract';
import type { Deps } from '../deps';
import { authenticateHuman } from './authenticate-human';
import { toUserView } from './views';

export interface GetMeOptions {
  deps: Deps;
  /** The dashboard JWT. */
  bearer: string | undefined;
}

export async function getMe({ deps, bearer }: GetMeOptions): Promise<TUserView> {
  return toUserView(await authenticateHuman(deps, bearer));
}
