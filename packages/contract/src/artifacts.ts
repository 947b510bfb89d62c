// Wire contract of artifacts: markdown documents, their exclusive edit locks and their history.
import { z } from 'zod';
import { ZDateTime, ZName, ZSpaceIdParam, ZUuid } from './common';
import { limits } from './limits';

/** Bytes of the UTF-8 encoding of a string (lone surrogates count as U+FFFD, 3 bytes). */
export function utf8Length(value: string): number {
  let bytes = 0;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < value.length) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * Artifact content is limited to 1 MiB measured in UTF-8 bytes (what is stored and downloaded),
 * not in characters: 1,048,576 ASCII characters fit, a quarter as many emoji.
 */
const ARTIFACT_TOO_BIG = `content exceeds ${limits.artifactContentMax} bytes (1 MiB) in UTF-8`;
export const ZArtifactContent = z
  .string()
  // UTF-16 code units never outnumber UTF-8 bytes, so this cheap bound only rejects early (and
  // alone: the exact count is not made, nor said a second time).
  .max(limits.artifactContentMax, { message: ARTIFACT_TOO_BIG, abort: true })
  .refine((value) => utf8Length(value) <= limits.artifactContentMax, { message: ARTIFACT_TOO_BIG })
  .meta({ description: 'Markdown text, at most 1 MiB in UTF-8' });

export const ZArtifactType = z.enum(['markdown']);

/** Path parameters are plain strings: an id that is not a UUID names nothing (404). */
export const ZArtifactPathParams = ZSpaceIdParam.extend({
  artifactId: z.string().meta({
    format: 'uuid',
    description: 'The artifact’s id (createArtifact’s id, or listArtifacts’)',
  }),
});
export type TArtifactPathParams = z.infer<typeof ZArtifactPathParams>;

/**
 * A version number in a path or a query: text on the wire, which core reads (anything but 1 to
 * versionMax names no version: 404, as a path id that is no UUID does), and an integer in the
 * OpenAPI document, as versions are everywhere else (zod-openapi applies `override` to the
 * document only).
 */
export const versionParam = (description: string) =>
  z.string().meta({
    description,
    override: { type: 'integer', minimum: 1, maximum: limits.versionMax },
  });

export const ZArtifactVersionPathParams = ZArtifactPathParams.extend({
  version: versionParam('Version number (1, 2, …); anything else names nothing (404)'),
});
export type TArtifactVersionPathParams = z.infer<typeof ZArtifactVersionPathParams>;

export const ZCreateArtifactBody = z.object({
  name: ZName.meta({ description: `The document’s name, 1 to ${limits.nameMax} characters` }),
  type: ZArtifactType.meta({ description: 'markdown, the only type' }),
  content: ZArtifactContent.default('').meta({ description: 'Initial content; empty when omitted' }),
});
export const ZCreateArtifactRequest = ZSpaceIdParam.extend(ZCreateArtifactBody.shape);
export type TCreateArtifactRequest = z.infer<typeof ZCreateArtifactBody>;

export const ZWriteArtifactBody = z.object({
  content: ZArtifactContent,
  baseVersion: z.number().int().min(1).max(limits.versionMax).optional().meta({
    description:
      'Optional optimistic check: the version this content was based on. If it is not the current version the write is refused with 409 `{error, version}` and nothing changes.',
  }),
});
export const ZWriteArtifactRequest = ZArtifactPathParams.extend(ZWriteArtifactBody.shape);
export type TWriteArtifactRequest = z.infer<typeof ZWriteArtifactBody>;

const lockFields = {
  lockedBy: ZUuid.optional().meta({ description: 'participantId of the lock holder; present while locked' }),
  lockedAt: ZDateTime.optional().meta({ description: 'When the holder took the lock; present while locked' }),
  lockExpiresAt: ZDateTime.optional().meta({
    description: 'When the lock lapses unless refreshed; present while locked',
  }),
};

export const ZArtifactView = z
  .object({
    id: ZUuid,
    spaceId: ZUuid,
    name: z.string(),
    type: ZArtifactType,
    content: z.string(),
    version: z.number().int().min(1).meta({ description: 'Starts at 1, bumped by exactly 1 on each write' }),
    createdBy: ZUuid,
    updatedBy: ZUuid,
    createdAt: ZDateTime,
    updatedAt: ZDateTime,
    ...lockFields,
  })
  .meta({ id: 'ArtifactView' });
export type TArtifactView = z.infer<typeof ZArtifactView>;

/**
 * An artifact as listArtifacts gives it: its content in full, unless the answer's content had
 * reached its bound (limits.artifactListBytes) before it: then `content` is empty and
 * `contentOmitted` is true (getArtifact or downloadArtifact reads it).
 */
export const ZArtifactListItem = ZArtifactView.extend({
  contentOmitted: z.literal(true).optional().meta({
    description:
      'Present (true) when the content is left out of this list, whose content had already reached 4 MiB: `content` is then empty; getArtifact reads it',
  }),
}).meta({ id: 'ArtifactListItem' });
export type TArtifactListItem = z.infer<typeof ZArtifactListItem>;

export const ZArtifactList = z
  .object({
    artifacts: z.array(ZArtifactListItem).meta({
      description:
        'Every artifact, oldest first, with its content while the content before it stays under 4 MiB',
    }),
  })
  .meta({ id: 'ArtifactList' });
export type TArtifactList = z.infer<typeof ZArtifactList>;

export const ZLockResult = z.object({ lockedBy: ZUuid, lockExpiresAt: ZDateTime }).meta({ id: 'LockResult' });
export type TLockResult = z.infer<typeof ZLockResult>;

export const ZArtifactVersionInfo = z
  .object({
    version: z.number().int().min(1),
    updatedBy: ZUuid,
    updatedAt: ZDateTime,
    size: z
      .number()
      .int()
      .nonnegative()
      .meta({ description: 'Size of that version’s content in UTF-8 bytes' }),
  })
  .meta({ id: 'ArtifactVersionInfo' });
export type TArtifactVersionInfo = z.infer<typeof ZArtifactVersionInfo>;

export const ZArtifactVersionList = z
  .object({ versions: z.array(ZArtifactVersionInfo).meta({ description: 'Newest first' }) })
  .meta({ id: 'ArtifactVersionList' });
export type TArtifactVersionList = z.infer<typeof ZArtifactVersionList>;
