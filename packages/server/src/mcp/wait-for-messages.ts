import type { TListMessagesResult } from '@convene/contract';
import { listMessages } from '@convene/core';
import type { ToolContext } from './tool';

export interface WaitForMessagesOptions {
  ctx: ToolContext;
  spaceId: string;
  timestamp: string | undefined;
  timeoutMs: number;
  /** Safety net between wake-ups: how often the database is read anyway. */
  pollMs?: number;
}

/** The longest a wait may last: below the MCP SDK client's default 60-second request timeout. */
export const MAX_WAIT_SECONDS = 55;
export const DEFAULT_WAIT_SECONDS = 25;

/**
 * A long poll over listMessages: answers as soon as there are messages after `timestamp`, or with
 * none when the time is up. It watches the space before its first read, so a message committed in
 * between still wakes it; without a watcher (or if a notification is lost) it reads every `pollMs`.
 * Authorisation is listMessages' own, checked on every read, so a key that dies mid-wait fails.
 */
export async function waitForMessages({
  ctx,
  spaceId,
  timestamp,
  timeoutMs,
  pollMs = 2000,
}: WaitForMessagesOptions): Promise<TListMessagesResult> {
  const deadline = Date.now() + timeoutMs;
  let news = false;
  let wake: (() => void) | undefined;
  const onNews = () => {
    news = true;
    wake?.();
  };
  const unwatch = ctx.watch?.(spaceId, onNews);
  ctx.signal.addEventListener('abort', onNews);
  try {
    for (;;) {
      news = false;
      const result = await listMessages({ deps: ctx.deps, spaceId, key: ctx.key, timestamp });
      const remaining = deadline - Date.now();
      if (result.messages.length > 0 || remaining <= 0 || ctx.signal.aborted) return result;
      if (news) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(pollMs, remaining));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  } finally {
    unwatch?.();
    ctx.signal.removeEventListener('abort', onNews);
  }
}
