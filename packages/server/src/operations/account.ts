import { operations as contract } from '@convene/contract';
import {
  createApiToken,
  getMe,
  listApiTokens,
  listMySpaces,
  login,
  revokeApiToken,
  signup,
} from '@convene/core';
import { type Declaration, operation } from './declare';

/** Built-in accounts and the dashboard: identity only, never a space key. */
export const accountOperations: Declaration[] = [
  operation(contract.signup, {
    ownTransaction: true,
    run: (input, { deps, client, deadline }) => signup({ deps, input, client, deadline }),
  }),
  operation(contract.login, {
    ownTransaction: true,
    run: (input, { deps, client }) => login({ deps, input, client }),
  }),
  operation(contract.getMe, { run: (_input, { deps, bearer }) => getMe({ deps, bearer }) }),
  operation(contract.listMySpaces, { run: (_input, { deps, bearer }) => listMySpaces({ deps, bearer }) }),
  operation(contract.createApiToken, {
    run: (input, { deps, bearer }) => createApiToken({ deps, bearer, input }),
  }),
  operation(contract.listApiTokens, { run: (_input, { deps, bearer }) => listApiTokens({ deps, bearer }) }),
  operation(contract.revokeApiToken, {
    run: ({ tokenId }, { deps, bearer }) => revokeApiToken({ deps, bearer, tokenId }),
  }),
];
