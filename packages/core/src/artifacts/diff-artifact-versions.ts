import { FILE_HEADERS_ONLY, formatPatch, type StructuredPatch, structuredPatch } from 'diff';
import { authorize, roles } from '../auth/authorize';
import type { Deps } from '../deps';
import { ValidationError } from '../errors';
import { findArtifact } from './shared';
import { findVersion } from './versions';

export interface DiffArtifactVersionsOptions {
  deps: Deps;
  spaceId: string;
  artifactId: string;
  /** The `from` and `to` query parameters as received. */
  from: string | undefined;
  to: string | undefined;
  key: string | undefined;
}

/** Lines of context around each change, as `diff -u` does by default. */
const CONTEXT = 3;
/**
 * Myers' algorithm is quadratic in the worst case; past this many milliseconds the diff falls
 * back to one hunk replacing every line, which is still a correct patch.
 */
const DIFF_TIMEOUT_MS = 1000;

/**
 * A unified diff from version `from` to version `to` (either order; equal contents give an
 * empty body, as `diff -u` does). File headers name `<name>.md` and the version; lines keep their exact bytes,
 * CR of CRLF included, and a missing final newline is marked as `diff` marks it.
 */
export async function diffArtifactVersions({
  deps,
  spaceId,
  artifactId,
  from,
  to,
  key,
}: DiffArtifactVersionsOptions): Promise<string> {
  const { db, clock } = deps;
  await authorize(db, clock, { spaceId, key, allow: roles.member, whenClosed: 'unauthorized' });
  const fromText = versionParam('from', from);
  const toText = versionParam('to', to);
  const artifact = await findArtifact(db, spaceId, artifactId);
  const [older, newer] = await Promise.all([
    findVersion(db, spaceId, artifactId, fromText),
    findVersion(db, spaceId, artifactId, toText),
  ]);
  return unifiedDiff(`${artifact.name}.md`, older, newer);
}

function versionParam(name: string, value: string | undefined): string {
  if (value === undefined || value === '') throw new ValidationError(`query parameter ${name} is required`);
  if (!/^-?\d+$/.test(value)) throw new ValidationError(`query parameter ${name} must be a version number`);
  return value;
}

export interface DiffLimits {
  /** Give up on a minimal diff after this many milliseconds (default 1000). */
  timeoutMs?: number;
  /** Give up on a minimal diff beyond this many edits (default: no limit). */
  maxEditLength?: number;
}

/** The unified diff between two versions; past the limits, the replace-everything patch. */
export function unifiedDiff(
  fileName: string,
  from: { version: number; content: string },
  to: { version: number; content: string },
  { timeoutMs = DIFF_TIMEOUT_MS, maxEditLength }: DiffLimits = {},
): string {
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

/** The patch that removes every old line and adds every new one. */
function replaceAll(
  fileName: string,
  oldText: string,
  newText: string,
  oldHeader: string,
  newHeader: string,
): StructuredPatch {
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
function splitLines(text: string): string[] {
  return text === '' ? [] : text.split(/(?<=\n)/);
}

function hunkLines(prefix: '-' | '+', lines: string[]): string[] {
  const out: string[] = [];
  for (const line of lines) {
    if (line.endsWith('\n')) out.push(prefix + line.slice(0, -1));
    else out.push(prefix + line, '\\ No newline at end of file');
  }
  return out;
}
