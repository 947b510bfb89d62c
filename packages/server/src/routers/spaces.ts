import { closeSpaceProcedure } from '../procedures/close-space';
import { createInvitationProcedure } from '../procedures/create-invitation';
import { createSpaceProcedure } from '../procedures/create-space';
import { getSpaceProcedure } from '../procedures/get-space';
import { updateSpaceProcedure } from '../procedures/update-space';
import { router } from '../trpc';

export const spacesRouter = router({
  createSpace: createSpaceProcedure,
  getSpace: getSpaceProcedure,
  updateSpace: updateSpaceProcedure,
  closeSpace: closeSpaceProcedure,
  createInvitation: createInvitationProcedure,
});
