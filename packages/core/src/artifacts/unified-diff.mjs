// The unified diff of two artifact versions, in plain JavaScript so that the diff worker thread
// (diff-worker.mjs) runs the very same code without a TypeScript loader. Typed by
// unified-diff.d.mts.
import { FILE_HEADERS_ONLY, formatPatch, structuredPatch } from 'diff';

/** Lines of context around each change, as `diff -u` does by default. */
const CONTEXT = 3;
/**
 * Myers' algorithm is quadratic in the worst case; past this many milliseconds the diff falls
 * back to one hunk replacing every line, which is still a correct patch.
 */
export const DIFF_TIMEOUT_MS = 1000;

/** The unified diff between two versions; past the limits, the replace-everything patch. */
export function unifiedDiff(fileName, from, to, { timeoutMs = DIFF_TIMEOUT_MS, maxEditLength } = {}) {
  const oldHeader = `version ${from.version}`;
  const newHeader = `version ${to.version}`;
  const patch =
    structuredPatch(fileName, fileName, from.content, to.content, oldHeader, newHeader, {
      context: CONTEXT,
      timeout: timeoutMs,
      ...(maxEditLength === undefined ? {} : { maxEditLength }),
    }) ?? replaceAll(fileName, from.content, to.content, oldHeader, newHeader);
  // Like `diff -u`, equal contents give no output at all (a header without hunks is no patch).
  return patch.hunks.length === 0 ? '' : formatPatch(patch, FILE_HEADERS_ONLY);
}

/** The patch that removes every old line and adds every new one, without comparing anything. */
export function replaceAllDiff(fileName, from, to) {
  const patch = replaceAll(
    fileName,
    from.content,
    to.content,
    `version ${from.version}`,
    `version ${to.version}`,
  );
  return from.content === to.content ? '' : formatPatch(patch, FILE_HEADERS_ONLY);
}

function replaceAll(fileName, oldText, newText, oldHeader, newHeader) {
  const oldLines = splitLines(oldText);
  const newLines = splitLines(newText);
  return {
    oldFileName: fileName,
    newFileName: fileName,
    oldHeader,
    newHeader,
    hunks: [
      {
        oldStart: 1,
        oldLines: oldLines.length,
        newStart: 1,
        newLines: newLines.length,
        lines: [...hunkLines('-', oldLines), ...hunkLines('+', newLines)],
      },
    ],
  };
}

/** Lines with their `\n` kept; the last one lacks it when the text does not end with a newline. */
function splitLines(text) {
  return text === '' ? [] : text.split(/(?<=\n)/);
}

function hunkLines(prefix, lines) {
  const out = [];
  for (const line of lines) {
    if (line.endsWith('\n')) out.push(prefix + line.slice(0, -1));
    else out.push(prefix + line, '\\ No newline at end of file');
  }
  return out;
}
