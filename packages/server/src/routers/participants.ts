import { router } from '../trpc';

export const participantsRouter = router({});
