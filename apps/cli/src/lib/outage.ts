import { setTimeout as delay } from 'node:timers/promises';
import { ConnectionError, ConveneError, type OutageHooks, TimeoutError } from '@convene/sdk';
import { connectionState, speaksPlainHttp, withoutRetryNote } from './failure';
import { isNotConvene, PROXY_AWAY } from './not-convene';
import type { Output, Spinner } from './output';

/**
 * Why the server did not answer, in a few words: the system's code (ECONNREFUSED), or its 5xx. A
 * connection closed before the answer came is said in the socket's own words (`other side
 * closed`), as a stream's cut is: its code (ECONNRESET, undici's `UND_ERR_SOCKET`) reads as Node's.
 */
export function outageReason(error: ConveneError): string {
  if (error instanceof TimeoutError) return 'timed out';
  if (error instanceof ConnectionError)
    return (
      (connectionState(error) === 'closed the connection without answering' && socketWords(error)) ||
      error.code ||
      error.message
    );
  // The SDK's `(retry after 1 s)`: the line says what it does meanwhile (reconnecting).
  return withoutRetryNote(error.message);
}

/** What the socket said of a connection closed under a call: the SDK's error holds fetch's, which holds it. */
function socketWords(error: ConnectionError): string | undefined {
  const fetchError = error.cause instanceof Error ? error.cause : undefined;
  return fetchError?.cause instanceof Error ? fetchError.cause.message || undefined : undefined;
}

/**
 * The SDK hooks of a wait that outlasts a server restart (a join's approval, a browser link),
 * saying so on its spinner: a wait that fell silent would look like a human who has not decided
 * yet. Said once per outage, then `Reconnected; waiting for …` once the server answers again.
 */
export function sayOutages(
  spinner: Spinner,
  server: string,
  waiting: string,
  intervalMs: number,
): OutageHooks {
  return {
    onDisconnect: ({ error, attempt }) => {
      if (attempt > 1) return;
      // A 5xx is an answer (a server restarting, its database away): said as one.
      const state =
        error.status === undefined
          ? `does not answer (${outageReason(error)})`
          : `answers ${outageReason(error)}`;
      spinner.message(`${server} ${state}; still waiting, trying again every ${intervalMs / 1000} s`);
    },
    onReconnect: () => spinner.message(`Reconnected; ${waiting[0]!.toLowerCase()}${waiting.slice(1)}`),
  };
}

/** How long a followed server may stay away before it is said again, and how often after that. */
export const STILL_AWAY_MS = 30_000;

/** What a live command says of the server it follows: see sayConnectionLost. */
export interface FollowHooks extends OutageHooks {
  /**
   * A first connection's failure, `attempt` counting them: the command started while the server
   * does not answer, and waits for it (see waitingForStart). Nothing was followed yet, so nothing
   * was lost: `onReconnect` then says `Connected`.
   */
  notYet(error: ConveneError, attempt: number): void;
}

/**
 * The SDK hooks of a command that follows the server live (tail, inbox --follow): a dropped
 * connection is said once on stderr, `Connection lost (ECONNREFUSED), reconnecting…`, so that it
 * is not taken for a quiet space, and `Reconnected` once it is back; the SDK keeps trying. An
 * outage that lasts is said again after 30 s, then every minute, with why the latest attempt
 * failed and `hint` of it (how to start a local server again): a server that was stopped is not
 * coming back by itself, and a terminal silent for minutes says nothing of it. Started while the
 * server does not answer (`notYet`), it says `Waiting for URL (ECONNREFUSED)…` with the hint at
 * once (a server not started yet, or another address meant), and `Connected`.
 *
 * With --json a script reads stdout, which must hold the events alone, and it cannot tell a lost
 * connection from a quiet space either: the same lines go to stderr as `{"warning": …}`, the one
 * format a script meets there. The hint stays out of them: it is a command line for a person.
 * --quiet says nothing of it, as it says no other status line.
 */
export function sayConnectionLost(
  out: Output,
  {
    server,
    hint,
    now = Date.now,
  }: { server: string; hint?: (error: ConveneError) => string; now?: () => number },
): FollowHooks {
  let lostAt = 0;
  let sayAgainAt = 0;
  /** Whether the outage said is a start's: nothing was ever followed. */
  let starting = false;
  // The text alone goes into the JSON: a colour would put the CLI's own marks in the string.
  const say = (text: string, colour: (text: string) => string) => {
    if (out.mode.json) out.warn(text);
    else out.info(colour(text));
  };
  // How to get it back, when nothing answers (a 5xx is a server that answers).
  const sayHint = (error: ConveneError) => {
    if (hint && error.status === undefined) out.hint(hint(error));
  };
  const first = (text: string) => {
    lostAt = now();
    sayAgainAt = lostAt + STILL_AWAY_MS;
    say(text, out.c.yellow);
  };
  const again = (error: ConveneError) => {
    if (now() < sayAgainAt) return;
    sayAgainAt = now() + 2 * STILL_AWAY_MS;
    const away = Math.round((now() - lostAt) / 1000);
    say(
      starting
        ? `Still waiting for ${server} after ${away} s (${outageReason(error)})…`
        : `Still reconnecting after ${away} s (${outageReason(error)})…`,
      out.c.yellow,
    );
    sayHint(error);
  };
  return {
    notYet: (error, attempt) => {
      if (attempt > 1) return again(error);
      starting = true;
      first(`Waiting for ${server} (${outageReason(error)})…`);
      sayHint(error);
    },
    onDisconnect: ({ error, attempt }) => {
      if (attempt > 1) return again(error);
      starting = false;
      first(`Connection lost (${outageReason(error)}), reconnecting…`);
    },
    onReconnect: () => {
      say(starting ? 'Connected' : 'Reconnected', out.c.dim);
      starting = false;
    },
  };
}

/** How often a live command's start tries again a server that does not answer yet. */
export const START_RETRY_MS = 2_000;
/** How long it waits for one, as long as a live connection's outage is ridden out (the SDK's). */
export const START_WAIT_MS = 600_000;

/**
 * A live command started while the server does not answer (`tail` before `serve` is up, or while
 * it restarts): the first connection's failure, which the SDK throws, is waited out as an outage
 * of the live connection is, said on stderr by the same `hooks` (sayConnectionLost: `notYet`), trying again
 * every START_RETRY_MS for up to START_WAIT_MS. `failed` says whether to try again, once it has
 * waited; what waiting cannot fix is not waited for: an answer (a refused key, an unknown space)
 * but a Convene server's 5xx, 408 or 429, an answer that is not Convene's but a proxy's 502, 503
 * or 504 (Convene away behind it), an https:// address that speaks plain HTTP, something on the
 * port that does not speak HTTP. `connected`, once the
 * first event came: `Connected`, after a failure.
 */
export function waitingForStart(
  hooks: FollowHooks,
  signal: AbortSignal,
  server: string,
  now: () => number = Date.now,
): { failed(error: unknown): Promise<boolean>; connected(): void } {
  let failures = 0;
  let since = 0;
  return {
    async failed(error) {
      if (!(error instanceof ConveneError) || signal.aborted || !worthWaiting(error, server)) return false;
      if (failures === 0) since = now();
      else if (now() - since >= START_WAIT_MS) return false;
      failures++;
      hooks.notYet(error, failures);
      await delay(START_RETRY_MS, undefined, { signal }).catch(() => {});
      return !signal.aborted;
    },
    connected() {
      if (failures > 0) hooks.onReconnect?.({ attempts: failures });
      failures = 0;
    },
  };
}

/** Whether a server that failed a first connection so may answer later: see waitingForStart. */
function worthWaiting(error: ConveneError, server: string): boolean {
  if (error instanceof TimeoutError) return true;
  if (error instanceof ConnectionError)
    return !speaksPlainHttp(error, server) && connectionState(error) !== 'answers, but not in HTTP';
  const { status } = error;
  if (status === undefined) return false;
  // A reverse proxy's own page while Convene is away behind it (restarting, or shutting down) is a
  // server that will be back, as the live connection takes it (it rides out every 5xx); any other
  // answer that is not Convene's is a wrong address (a web server, another API).
  if (isNotConvene(error)) return PROXY_AWAY.has(status);
  return status >= 500 || status === 408 || status === 429;
}
