import { approveLinkProcedure } from '../procedures/approve-link';
import { denyLinkProcedure } from '../procedures/deny-link';
import { getLinkRequestProcedure } from '../procedures/get-link-request';
import { pollLinkProcedure } from '../procedures/poll-link';
import { startLinkProcedure } from '../procedures/start-link';
import { router } from '../trpc';

export const linkingRouter = router({
  startLink: startLinkProcedure,
  pollLink: pollLinkProcedure,
  approveLink: approveLinkProcedure,
  denyLink: denyLinkProcedure,
  getLinkRequest: getLinkRequestProcedure,
});
