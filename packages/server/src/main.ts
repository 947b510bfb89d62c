import { loadConfig, logFormatOf } from './env';
import { logsAsJson, serve, startFailure, startFailureLine } from './serve';

/** The server alone (`pnpm --filter @convene/server start`); `convene serve` is the same with its CLI. */
let json = logsAsJson(logFormatOf());

/** Says why the process did not start, on standard error, then ends it with `exitCode`. */
function fail(message: string, exitCode: number): void {
  process.stderr.write(`${startFailureLine(json, message, { exitCode })}\n`, () => process.exit(exitCode));
}

Promise.resolve()
  .then(async (): Promise<unknown> => {
    let config: ReturnType<typeof loadConfig>;
    try {
      config = loadConfig();
    } catch (error) {
      // Refused settings: exit 2, as `convene serve` (README, Configuration).
      return fail((error as Error).message, 2);
    }
    json = logsAsJson(config.logFormat);
    return serve(config);
  })
  .catch((error: unknown) => {
    // A setting refused only when tried (HOST) exits 2, as above; any other failure 1.
    const { message, exitCode } = startFailure(error);
    fail(message, exitCode);
  });
