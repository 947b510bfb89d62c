// The space's live events, through the SDK's stream: the key goes in the X-Private-Key header
// (never in the URL), and the SDK resumes a dropped connection with Last-Event-ID, so every event
// arrives once, in order.
import { Convene, type StreamEvent } from '@convene/sdk';
import { $, type NoticeKind, notify } from '../../lib/dom';
import { describeError, statusOf, UNREACHABLE } from '../../lib/errors';
import { forgetSpaceCredentials } from '../../lib/storage';
import { artifactChanged, renderArtifacts } from './documents';
import { renderDocument, saysUnrenewed, spaceEnded } from './editor';
import { appendMessage, showEmptyMessages } from './messages';
import { participantChanged, renderParticipants } from './participants';
import { isMuted, isOwner, space, spaceId, state } from './state';

function setLive(text: string, on: boolean): void {
  const live = $('live');
  live.textContent = text;
  live.classList.toggle('on', on);
}

let connected = false;
/** The space notice says the service is out of reach: the next connection takes it back. */
let outage = false;

/**
 * Says in the space notice that the service is out of reach (no answer, a 5xx, a 429) and that
 * the page keeps trying; the next connection takes it back.
 */
function sayOutage(error: unknown): void {
  const draft = state.doc?.editing
    ? ' The document you are editing stays here; saving it may fail until then.'
    : '';
  const text = `${describeError(error)} This page reconnects by itself when it can.${draft}`;
  // Each failed attempt (every few seconds) would otherwise say it again to a screen reader.
  if (outage && $('space-notice').textContent === text) return;
  outage = true;
  notify('space-notice', text, 'warn');
}

/**
 * An answer that says this key no longer opens the space (or the space is gone): the end for this
 * tab. A network failure, a 5xx, a 408 or a 429 is not; the page tries again.
 */
const isFinal = (error: unknown): boolean => {
  const status = statusOf(error);
  return status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429;
};

/**
 * A send or a save that failed for want of the service is not said to fail any more once the page
 * reaches it again: the message or the draft is still there to send or save again.
 */
function reachedAgain(): void {
  for (const id of ['send-notice', 'artifact-notice'])
    if ($(id).textContent?.startsWith(UNREACHABLE) && !(id === 'artifact-notice' && saysUnrenewed()))
      notify(id, '');
}

// A network that went and came back while the stream stayed open (nothing to reconnect): the stream
// still reaches the service.
addEventListener('online', () => {
  if (connected) reachedAgain();
});

/**
 * The stream's own client. Its fetch tells the page when a connection opens and when the SDK
 * starts another one after a drop: that is what the "live" indicator shows.
 */
const streaming = new Convene({
  baseUrl: location.origin,
  fetch: async (input, init) => {
    if (connected) setLive('reconnecting…', false);
    connected = false;
    const response = await fetch(input, init);
    if (response.ok) {
      connected = true;
      setLive('live', true);
      if (outage) notify('space-notice', '');
      outage = false;
      reachedAgain();
    }
    return response;
  },
});

let controller: AbortController | undefined;
/** Where a new stream resumes after the previous one failed. */
let lastEventId: number | undefined;

/** The space has ended for this tab: read-only from now on. */
export function endSpace(text: string, kind: NoticeKind = 'warn'): void {
  state.ended = true;
  controller?.abort();
  setLive('ended', false);
  // The key opens nothing any more: this device need not keep it.
  forgetSpaceCredentials(spaceId, false);
  // Nothing is sent any more, muted or not: the composer's notice is over.
  notify('send-notice', '');
  spaceEnded();
  notify('space-notice', text, kind);
  renderParticipants();
  renderArtifacts();
  renderDocument();
}

/** Under the composer, which is disabled meanwhile: why this tab's participant cannot send. */
export const sayMuted = (): void =>
  notify('send-notice', isMuted() ? 'The owner has muted you: you can read, but not send.' : '', 'warn');

function handle(event: StreamEvent): void {
  switch (event.event) {
    case 'message':
      appendMessage(event.data);
      break;
    case 'participant-status': {
      const participant = event.data;
      participantChanged(participant);
      if (participant.participantId !== state.me.participantId) break;
      if (participant.status === 'kicked') endSpace('The owner removed you from this space.', 'error');
      else if (participant.status === 'left') endSpace('You left this space.');
      else {
        // Muted or unmuted: the composer and the document's lock button say what this tab may do.
        sayMuted();
        renderDocument();
      }
      break;
    }
    case 'context':
      // It follows the backlog: from now on each new message is announced, not the replay.
      $('messages').setAttribute('aria-live', 'polite');
      state.participants = new Map(event.data.participants.map((p) => [p.participantId, p]));
      state.artifacts = new Map(event.data.artifacts.map((a) => [a.id, a]));
      renderParticipants();
      renderArtifacts();
      showEmptyMessages();
      break;
    case 'space-closed':
      endSpace(
        event.data.reason === 'expired'
          ? 'This space has expired.'
          : isOwner()
            ? 'You closed this space.'
            : 'The owner closed this space.',
      );
      break;
    case 'webhook-disabled':
      // A participant's push channel gave up: nothing this page shows.
      break;
    default:
      artifactChanged(event.event, event.data);
  }
}

/** Reads the stream until the space ends for this tab; a stream that fails is replaced. */
export async function connectStream(): Promise<void> {
  const mine = new AbortController();
  controller = mine;
  const stream = streaming.space(spaceId, state.me.key).messages.stream({
    signal: mine.signal,
    ...(lastEventId === undefined ? {} : { lastEventId }),
    // The SDK keeps reconnecting for minutes before it gives up: once an attempt to reconnect has
    // failed (the first comes at most 2.5 s after the drop), the page says so instead of waiting.
    onDisconnect: ({ error, attempt }) => {
      if (attempt > 1 && !state.ended && controller === mine) sayOutage(error);
    },
  });
  let failure: unknown;
  try {
    for await (const event of stream) {
      try {
        handle(event);
      } catch (error) {
        console.error(`bad ${event.event} event`, error);
      }
    }
  } catch (error) {
    failure = error;
  }
  lastEventId = stream.lastEventId;
  if (state.ended || mine.signal.aborted) return;
  // The stream ended without saying why (the key no longer opens the space), or failed for good:
  // ask the API why.
  connected = false;
  setLive('disconnected', false);
  try {
    await space().get();
  } catch (error) {
    if (isFinal(error)) {
      endSpace(describeError(error), 'error');
      return;
    }
    // Out of reach or failing for now (a laptop asleep, a network change, a restart): not the end.
    sayOutage(error);
  }
  if (failure) console.warn('the stream failed; reconnecting', failure);
  setTimeout(() => {
    if (!state.ended && controller === mine) void connectStream();
  }, 3000);
}
