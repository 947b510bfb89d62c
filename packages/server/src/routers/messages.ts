import { listMessagesProcedure } from '../procedures/list-messages';
import { sendMessageProcedure } from '../procedures/send-message';
import { router } from '../trpc';

export const messagesRouter = router({
  sendMessage: sendMessageProcedure,
  listMessages: listMessagesProcedure,
});
