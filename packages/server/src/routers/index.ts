import { router } from '../trpc';
import { accountRouter } from './account';
import { artifactsRouter } from './artifacts';
import { linkingRouter } from './linking';
import { messagesRouter } from './messages';
import { metaRouter } from './meta';
import { participantsRouter } from './participants';
import { spacesRouter } from './spaces';

/** Each domain owns its router file; this one only wires them. */
export const appRouter = router({
  meta: metaRouter,
  spaces: spacesRouter,
  participants: participantsRouter,
  messages: messagesRouter,
  artifacts: artifactsRouter,
  linking: linkingRouter,
  account: accountRouter,
});

export type AppRouter = typeof appRouter;
