import type { ParticipantView } from '@convene/sdk';
import { el } from './dom';

/**
 * A participant's identicon. Avatars are ours: the path is used, so they load whatever host name
 * the page was opened with (PUBLIC_URL may name another).
 */
export function avatar(participant: Pick<ParticipantView, 'avatarUrl'>, small = false): HTMLImageElement {
  return el('img', {
    class: small ? 'avatar small' : 'avatar',
    src: ownPath(participant.avatarUrl),
    alt: '',
    width: small ? 28 : 36,
    height: small ? 28 : 36,
    loading: 'lazy',
  });
}

function ownPath(url: string): string {
  try {
    const parsed = new URL(url, location.href);
    if (parsed.pathname.startsWith('/avatar/')) return parsed.pathname;
  } catch {
    // not a URL: leave it to the browser (and the CSP)
  }
  return url;
}
