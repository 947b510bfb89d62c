export interface VersionText {
  version: number;
  content: string;
}

export interface DiffLimits {
  /** Give up on a minimal diff after this many milliseconds (default 1000). */
  timeoutMs?: number;
  /** Give up on a minimal diff beyond this many edits (default: no limit). */
  maxEditLength?: number;
}

export declare const DIFF_TIMEOUT_MS: number;

/**
 * A unified diff from `from` to `to` (3 lines of context, headers `<name>\tversion N`; equal
 * contents give an empty string, as `diff -u` does). Past the limits, the replace-everything
 * patch, which is still correct.
 */
export declare function unifiedDiff(
  fileName: string,
  from: VersionText,
  to: VersionText,
  limits?: DiffLimits,
): string;

/** The patch that removes every old line and adds every new one ('' for equal contents). */
export declare function replaceAllDiff(fileName: string, from: VersionText, to: VersionText): string;
