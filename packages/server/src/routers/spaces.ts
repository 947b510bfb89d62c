import { createSpaceProcedure } from '../procedures/create-space';
import { getSpaceProcedure } from '../procedures/get-space';
import { router } from '../trpc';

export const spacesRouter = router({
  createSpace: createSpaceProcedure,
  getSpace: getSpaceProcedure,
});
