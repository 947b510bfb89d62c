import { router } from '../trpc';

export const accountRouter = router({});
