/** User codes of the link flow: stored as 8 upper-case letters, shown as `XXXX-XXXX`. */

const USER_CODE_RE = /^[BCDFGHJKLMNPQRSTVWXZ]{8}$/;

export const formatUserCode = (code: string): string => `${code.slice(0, 4)}-${code.slice(4)}`;

/** A typed code in its stored form (dash, spaces and case ignored), or null when it cannot be one. */
export function normalizeUserCode(input: string): string | null {
  const code = input.replace(/[\s-]/g, '').toUpperCase();
  return USER_CODE_RE.test(code) ? code : null;
}
