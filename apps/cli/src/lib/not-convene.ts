import { ConveneError } from '@convene/sdk';
import { CliError } from './errors';

/**
 * Whether an answer came from something that is not a Convene server (a web server, a proxy's
 * error page, another API): every answer of Convene, errors included, carries `API-Version`.
 */
export function isNotConvene(error: unknown): error is ConveneError {
  return error instanceof ConveneError && error.status !== undefined && !error.headers?.has('api-version');
}

/**
 * An answer that is not Convene's: its status, not its body (an HTML page as the error says
 * nothing), and where to look: the address, or a proxy in front of Convene for a 5xx (and
 * `convene doctor`, unless that is what is asking).
 */
export function notConvene(
  error: ConveneError,
  server: string,
  { fromDoctor = false }: { fromDoctor?: boolean } = {},
): CliError {
  return new CliError(
    `the server at ${server} answered HTTP ${error.status} but is not a Convene server (or not this API version)`,
    {
      hint: `${
        error.status !== undefined && error.status >= 500
          ? 'A proxy in front of Convene answers so while Convene is down; else check'
          : 'Check'
      } the address (--url or CONVENE_URL)${fromDoctor ? '' : '; `convene doctor` checks the server'}.`,
      details: { status: error.status },
      cause: error,
    },
  );
}
