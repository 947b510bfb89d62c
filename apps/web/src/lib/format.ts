import type { ParticipantView } from '@convene/sdk';

/** A time of day for today, a date and time otherwise, in the reader's locale. */
export function formatTime(iso: string | undefined, now: Date = new Date()): string {
  const date = new Date(iso ?? '');
  if (Number.isNaN(date.getTime())) return '';
  return date.toDateString() === now.toDateString()
    ? date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })
    : date.toLocaleString([], { dateStyle: 'medium', timeStyle: 'short' });
}

/** A space's remaining lifetime, rounded to what a person needs to know. */
export function formatDuration(seconds: number): string {
  if (seconds <= 0) return 'expired';
  if (seconds < 90) return `${seconds} s left`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min left`;
  if (seconds < 48 * 3600) return `${Math.round(seconds / 3600)} h left`;
  return `${Math.round(seconds / 86400)} days left`;
}

export const STATUS_LABELS: Record<ParticipantView['status'], string> = {
  waitingForApproval: 'waiting for approval',
  active: 'active',
  muted: 'muted',
  left: 'left',
  kicked: 'removed',
};

/** `?next=` when it is a path of this site, else the dashboard: never another origin. */
export function nextPath(search: string): string {
  const next = new URLSearchParams(search).get('next') ?? '';
  return next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\') ? next : '/dashboard';
}
