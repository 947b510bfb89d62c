import { operations as contract } from '@convene/contract';
import { approveLink, denyLink, getLinkRequest, pollLink, startLink } from '@convene/core';
import { type Declaration, operation } from './declare';

/** The browser-link flow (device-flow style) that gives an agent a human's usr_ token. */
export const linkingOperations: Declaration[] = [
  operation(contract.startLink, { run: (input, { deps }) => startLink({ deps, input }) }),
  operation(contract.pollLink, {
    ownTransaction: true,
    run: (input, { deps, deadline }) => pollLink({ deps, input, deadline }),
  }),
  operation(contract.getLinkRequest, {
    run: ({ userCode }, { deps, bearer }) => getLinkRequest({ deps, bearer, userCode }),
  }),
  operation(contract.approveLink, { run: (input, { deps, bearer }) => approveLink({ deps, bearer, input }) }),
  operation(contract.denyLink, { run: (input, { deps, bearer }) => denyLink({ deps, bearer, input }) }),
];
