import { router } from '../trpc';

export const artifactsRouter = router({});
