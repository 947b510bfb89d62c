import { loadConfig } from './env';
import { serve } from './serve';

Promise.resolve()
  .then(() => serve(loadConfig()))
  .catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
