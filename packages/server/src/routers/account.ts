import { createApiTokenProcedure } from '../procedures/create-api-token';
import { getMeProcedure } from '../procedures/get-me';
import { getMySpaceKeyProcedure } from '../procedures/get-my-space-key';
import { listApiTokensProcedure } from '../procedures/list-api-tokens';
import { listMySpacesProcedure } from '../procedures/list-my-spaces';
import { loginProcedure } from '../procedures/login';
import { revokeApiTokenProcedure } from '../procedures/revoke-api-token';
import { signupProcedure } from '../procedures/signup';
import { router } from '../trpc';

export const accountRouter = router({
  signup: signupProcedure,
  login: loginProcedure,
  getMe: getMeProcedure,
  listMySpaces: listMySpacesProcedure,
  createApiToken: createApiTokenProcedure,
  listApiTokens: listApiTokensProcedure,
  revokeApiToken: revokeApiTokenProcedure,
  getMySpaceKey: getMySpaceKeyProcedure,
});
