import { healthProcedure } from '../procedures/health';
import { router } from '../trpc';

export const metaRouter = router({
  health: healthProcedure,
});
