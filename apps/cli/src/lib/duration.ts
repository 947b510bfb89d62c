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
  const seconds = parseDuration(text);
  if (seconds === undefined || seconds < 1 || seconds > 2_592_000) {
    throw new UsageError(`--ttl must be a duration from 1s to 30d (e.g. 90m, 2h, 7d), not "${text}"`);
  }
  return seconds;
}

/**
 * A `--since` value: an RFC 3339 date-time as the API takes it, or a duration back from now
 * (`10m`, `2h`). Returns the date-time to send.
 */
export function parseSince(text: string, now: Date = new Date()): string {
  const seconds = parseDuration(text);
  if (seconds !== undefined) return new Date(now.getTime() - seconds * 1000).toISOString();
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i.test(text.trim())) {
    return text.trim();
  }
  throw new UsageError(
    `--since must be a date-time (2030-01-01T12:00:00Z) or a duration back from now (10m, 2h), not "${text}"`,
  );
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
