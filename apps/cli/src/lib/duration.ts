import { UsageError } from './errors';

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };

/** `90`, `45s`, `30m`, `2h`, `1h30m`, `7d` → seconds; undefined when the text is not a duration. */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim().toLowerCase();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  if (!/^(\d+[smhdw])+$/.test(trimmed)) return undefined;
  let seconds = 0;
  for (const [, amount, unit] of trimmed.matchAll(/(\d+)([smhdw])/g))
    seconds += Number(amount) * UNITS[unit!]!;
  return seconds;
}

/** A `--ttl` value, within the service's limits (1 s to 30 days). */
export function parseTtl(text: string): number {
  // The API counts seconds, people hours: a number alone is more likely hours meant than seconds,
  // and a space closed seconds after it opened cannot be opened again.
  const bare = text.trim();
  if (/^[1-9]\d*$/.test(bare)) {
    throw new UsageError(
      `--ttl needs a unit: "${bare}" alone would be ${bare} seconds`,
      `Write ${bare}h (hours), ${bare}d (days), ${bare}m (minutes) or ${bare}s (seconds).`,
    );
  }
  const seconds = parseDuration(text);
  if (seconds === undefined || seconds < 1 || seconds > 2_592_000) {
    throw new UsageError(`--ttl must be a duration from 1s to 30d (e.g. 90m, 2h, 7d), not "${text}"`);
  }
  return seconds;
}

const SINCE_FORMATS =
  'a duration back from now (10m, 2h, 1d), a date-time (2030-01-01T12:00:00Z), a local date and ' +
  'time (2030-01-01 12:00), a date (2030-01-01), a time today (09:30), today or yesterday';

/**
 * A `--since` value, as people type it: a duration back from now (`10m`, `2h`), an RFC 3339
 * date-time (sent as it is: the API keeps microseconds), or local time: `2030-01-01 12:00`,
 * `2030-01-01`, `09:30` (today, or yesterday when that is still to come), `today`, `yesterday`.
 * Returns the date-time to send.
 */
export function parseSince(text: string, now: Date = new Date()): string {
  const trimmed = text.trim();
  // A number alone was taken as seconds, which nobody means by `--since 17` (17 minutes? 17:00?),
  // and which --ttl refuses already: a unit says which.
  if (/^\d+$/.test(trimmed)) {
    throw new UsageError(
      `--since needs a unit: "${trimmed}" alone would be ${trimmed} seconds ago`,
      `Write ${trimmed}s (seconds), ${trimmed}m (minutes), ${trimmed}h (hours) or ${trimmed}d (days) back from now, or a time (09:30) or date (2030-01-01).`,
    );
  }
  const seconds = parseDuration(trimmed);
  if (seconds !== undefined) return new Date(now.getTime() - seconds * 1000).toISOString();
  if (/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i.test(trimmed)) {
    if (!Number.isNaN(new Date(trimmed.replace(' ', 'T')).getTime())) return trimmed.replace(' ', 'T');
  }
  const local = localInstant(trimmed.toLowerCase(), now);
  if (local) return local.toISOString();
  throw new UsageError(`--since takes ${SINCE_FORMATS}; not "${text}"`);
}

/** A date, a date and time, or a time of day without a zone, in this machine's time zone. */
function localInstant(text: string, now: Date): Date | undefined {
  const midnight = new Date(now.getFullYear(), now.getMonth(), now.getDate());
  if (text === 'today') return midnight;
  if (text === 'yesterday') return new Date(now.getFullYear(), now.getMonth(), now.getDate() - 1);
  const date = text.match(/^(\d{4})-(\d{2})-(\d{2})(?:[t ](\d{2}):(\d{2})(?::(\d{2}))?)?$/);
  if (date) {
    const [, y, mo, d, h = '0', mi = '0', s = '0'] = date;
    const at = new Date(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
    // new Date rolls 2030-02-31 over into March: a date that does not exist is refused instead.
    return at.getMonth() === Number(mo) - 1 && at.getDate() === Number(d) && Number(h) < 24 && Number(mi) < 60
      ? at
      : undefined;
  }
  const time = text.match(/^(\d{1,2}):(\d{2})(?::(\d{2}))?$/);
  if (time) {
    const [, h, mi, s = '0'] = time;
    if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return undefined;
    const at = new Date(now.getFullYear(), now.getMonth(), now.getDate(), Number(h), Number(mi), Number(s));
    // 23:00 typed at 00:10 means last night.
    if (at.getTime() > now.getTime()) at.setDate(at.getDate() - 1);
    return at;
  }
  return undefined;
}

/** `2h 5m` style, for people: how long until a lock or a space lapses. */
export function formatSeconds(total: number): string {
  if (total < 60) return `${Math.max(0, Math.round(total))}s`;
  const parts: string[] = [];
  const days = Math.floor(total / 86_400);
  const hours = Math.floor((total % 86_400) / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  if (days) parts.push(`${days}d`);
  if (hours) parts.push(`${hours}h`);
  if (minutes && !days) parts.push(`${minutes}m`);
  return parts.join(' ');
}

/**
 * A time left, as `space list` and `space show` say it: to the nearest minute, so that a space read
 * the second after it opened (86,399 s) shows `1d` as one read the same second (86,400 s), not
 * `23h 59m`.
 */
export const timeLeft = (seconds: number): string =>
  formatSeconds(seconds < 60 ? seconds : Math.round(seconds / 60) * 60);
