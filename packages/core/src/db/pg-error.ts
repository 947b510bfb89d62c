/** PostgreSQL's SQLSTATE of a deadlock victim. */
export const DEADLOCK_DETECTED = '40P01';

/** The SQLSTATE of a database error, however deep the driver wrapped it (drizzle, postgres.js). */
export function sqlState(error: unknown): string | undefined {
  for (let e: unknown = error; e && typeof e === 'object'; e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}
