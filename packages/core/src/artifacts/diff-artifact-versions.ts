import { authorize, roles } from '../auth/authorize';
import type { Deps } from '../deps';
import { PayloadTooLargeError, ValidationError } from '../errors';
import { findArtifact } from './shared';
import { findVersion } from './versions';

export { type DiffLimits, unifiedDiff } from './unified-diff.mjs';

export interface DiffArtifactVersionsOptions {
  deps: Deps;
  spaceId: string;
  artifactId: string;
  /** The `from` and `to` query parameters as received. */
  from: string | undefined;
  to: string | undefined;
  key: string | undefined;
}

/** The most text a diff compares: both versions together, in UTF-8 bytes. */
export const DIFF_MAX_INPUT_BYTES = 2 * 1024 * 1024;

/**
 * A unified diff from version `from` to version `to` (either order; equal contents give an
 * empty body, as `diff -u` does). File headers name the artifact as a markdown file (`<name>.md`,
 * or the name alone when it already ends in `.md`) and the version; lines keep their
 * exact bytes, CR of CRLF included, and a missing final newline is marked as `diff` marks it.
 * Computed by the diff engine (off the request thread, cached by artifact and versions); two
 * versions of more than 2 MiB together are refused with 413.
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
  const bytes = Buffer.byteLength(older.content) + Buffer.byteLength(newer.content);
  if (bytes > DIFF_MAX_INPUT_BYTES)
    throw new PayloadTooLargeError(
      `these versions hold ${bytes} bytes together; a diff compares at most ${DIFF_MAX_INPUT_BYTES}`,
    );
  return deps.diffs.diff({
    // Versions never change: the pair names its diff for good.
    key: `${spaceId}/${artifactId}/${older.version}/${newer.version}`,
    fileName: diffFileName(artifact.name),
    from: { version: older.version, content: older.content },
    to: { version: newer.version, content: newer.content },
  });
}

/**
 * `plan` is `plan.md`, and `plan.md` stays `plan.md` (not `plan.md.md`). Downloads still add
 * `.md` to every name, as the spec's decisions.md fixes `filename="<name>.md"`.
 */
function diffFileName(name: string): string {
  return /\.md$/i.test(name) ? name : `${name}.md`;
}

function versionParam(name: string, value: string | undefined): string {
  if (value === undefined || value === '') throw new ValidationError(`query parameter ${name} is required`);
  if (!/^-?\d+$/.test(value)) throw new ValidationError(`query parameter ${name} must be a version number`);
  return value;
}
