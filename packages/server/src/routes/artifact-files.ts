import { diffArtifactVersions, getArtifact } from '@convene/core';
import type { FastifyRequest, RouteHandlerMethod } from 'fastify';
import { MEDIA, sendRaw } from '../http/reply';
import { headerValue } from '../rest/caller';
import type { RouteScope } from './scope';

interface ArtifactParams {
  spaceId: string;
  artifactId: string;
}

const spaceKey = (request: FastifyRequest): string | undefined =>
  headerValue(request, 'x-private-key') || undefined;

/** The artifact's content as a markdown attachment (not JSON). */
export function downloadHandler({ deps }: RouteScope): RouteHandlerMethod {
  return async (request, reply) => {
    const { spaceId, artifactId } = request.params as ArtifactParams;
    const artifact = await getArtifact({ deps, spaceId, artifactId, key: spaceKey(request) });
    return sendRaw(reply, {
      type: MEDIA.markdown,
      body: artifact.content,
      cache: 'no-store',
      // Its bytes are whatever a participant wrote: never sniffed into anything but markdown.
      nosniff: true,
      headers: { 'Content-Disposition': contentDisposition(`${artifact.name}.md`) },
    });
  };
}

/** The unified diff between two versions (text/x-diff). */
export function diffHandler({ deps }: RouteScope): RouteHandlerMethod {
  return async (request, reply) => {
    const { spaceId, artifactId } = request.params as ArtifactParams;
    const query = request.query as { from?: string | string[]; to?: string | string[] };
    const diff = await diffArtifactVersions({
      deps,
      spaceId,
      artifactId,
      from: single(query.from),
      to: single(query.to),
      key: spaceKey(request),
    });
    return sendRaw(reply, { type: MEDIA.diff, body: diff, cache: 'no-store', nosniff: true });
  };
}

/** A repeated query parameter counts by its first value. */
function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Controls, and the bidirectional controls, which show a name as another. */
const SHOWN_WRONG = /[\p{Cc}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;

/**
 * `attachment; filename="…"` per RFC 6266: characters that cannot stand in a quoted ASCII
 * filename (non-ASCII, controls, quote, backslash, and path separators, which recipients would
 * strip anyway) become `_` there, and then the name follows in `filename*` (RFC 8187), exact but
 * for controls and the bidirectional controls, which become `_` there too: with U+202E,
 * `invoice\u202Egnp.md` would be shown as `invoicedm.png`.
 */
export function contentDisposition(fileName: string): string {
  const fallback = fileName.replace(/[^\x20-\x7e]|["\\/]/gu, '_');
  if (fallback === fileName) return `attachment; filename="${fileName}"`;
  const shown = fileName.replace(SHOWN_WRONG, '_');
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encodeRfc8187(shown)}`;
}

/**
 * An artifact's file name as download_artifact gives it to an agent, to save under: `<name>.md`,
 * one path segment (`/` and `\` become `_`, as controls and bidirectional controls do), so that
 * `../../.ssh/authorized_keys` is saved beside the others as `.._.._.ssh_authorized_keys.md`.
 */
export function fileNameOf(artifactName: string): string {
  return `${artifactName.replace(SHOWN_WRONG, '_').replace(/[/\\]/g, '_')}.md`;
}

/** Percent-encodes UTF-8 bytes except RFC 8187's attr-char set. */
function encodeRfc8187(value: string): string {
  // encodeURIComponent throws on a lone surrogate; such a name can only be shown as U+FFFD.
  const wellFormed = value.replace(
    /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
    '\ufffd',
  );
  return encodeURIComponent(wellFormed).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}
