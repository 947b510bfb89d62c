import { router } from '../trpc';

export const linkingRouter = router({});
