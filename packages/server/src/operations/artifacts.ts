import { operations as contract, ZArtifactPathParams } from '@convene/contract';
import {
  createArtifact,
  diffArtifactVersions,
  getArtifact,
  getArtifactVersion,
  heartbeatArtifactLock,
  listArtifacts,
  listArtifactVersions,
  lockArtifact,
  restoreArtifactVersion,
  unlockArtifact,
  writeArtifact,
} from '@convene/core';
import { z } from 'zod';
import { hints } from '../mcp/tool';
import { diffHandler, downloadHandler, fileNameOf } from '../routes/artifact-files';
import { type Declaration, operation, rawOperation } from './declare';

/** Tools take versions as numbers; the REST path carries them as strings. */
const ZVersionArg = z.number().int().min(1).describe('Version number: 1 is the content at creation');
const versionArgs = ZArtifactPathParams.extend({ version: ZVersionArg });
const versionInput = ({ version, ...rest }: Record<string, unknown>) => ({
  ...(rest as z.output<typeof ZArtifactPathParams>),
  version: String(version),
});

export const artifactOperations: Declaration[] = [
  operation(contract.createArtifact, {
    run: ({ spaceId, ...input }, { deps, key }) => createArtifact({ deps, spaceId, key, input }),
    tool: {
      title: 'Create an artifact',
      description:
        'Create a shared markdown document (version 1, unlocked). Owner or active participant key; muted participants cannot.',
      annotations: hints.create,
    },
  }),
  operation(contract.listArtifacts, {
    run: ({ spaceId }, { deps, key }) => listArtifacts({ deps, spaceId, key }),
    tool: {
      title: 'List artifacts',
      description:
        'List the artifacts of the space with their content and lock state. Owner or participant key.',
      annotations: hints.read,
    },
  }),
  operation(contract.getArtifact, {
    run: ({ spaceId, artifactId }, { deps, key }) => getArtifact({ deps, spaceId, artifactId, key }),
    tool: {
      title: 'Read an artifact',
      description:
        'Read one artifact with its full content, version and lock state. Owner or participant key.',
      annotations: hints.read,
    },
  }),
  rawOperation(contract.downloadArtifact, {
    openapi: {
      responses: {
        '200': {
          description:
            'The raw markdown, not JSON. `Content-Disposition: attachment; filename="<name>.md"`, with the exact name in `filename*` (RFC 6266) when it is not plain ASCII.',
          headers: { 'Content-Disposition': { schema: { type: 'string' } } },
          content: { 'text/markdown': { schema: { type: 'string' } } },
        },
      },
    },
    tool: {
      title: 'Download an artifact',
      description:
        'The artifact as a markdown file: its file name (<name>.md, one path segment: / and \\ become _), media type and raw content. Owner or participant key.',
      annotations: hints.read,
      output: z.object({
        filename: z.string(),
        mediaType: z.literal('text/markdown'),
        version: z.number().int().min(1),
        content: z.string(),
      }),
      run: async ({ spaceId, artifactId }, { deps, key }) => {
        const artifact = await getArtifact({ deps, spaceId, artifactId, key });
        return {
          filename: fileNameOf(artifact.name),
          mediaType: 'text/markdown' as const,
          version: artifact.version,
          content: artifact.content,
        };
      },
    },
    handler: downloadHandler,
  }),
  operation(contract.lockArtifact, {
    run: ({ spaceId, artifactId }, { deps, key }) => lockArtifact({ deps, spaceId, artifactId, key }),
    tool: {
      title: 'Lock an artifact for editing',
      description:
        'Take the exclusive edit lock on an artifact (or refresh it if you already hold it). The lock lapses after its TTL (lockExpiresAt) unless you write or heartbeat. Fails with 423 and lockedBy when someone else holds it. Owner or active participant key.',
      annotations: hints.setState,
    },
  }),
  operation(contract.writeArtifact, {
    run: ({ spaceId, artifactId, ...input }, { deps, key }) =>
      writeArtifact({ deps, spaceId, artifactId, key, input }),
    tool: {
      title: 'Write an artifact',
      description:
        'Replace the content of an artifact you hold the lock on: the version goes up by one and the lock is refreshed. Pass baseVersion to refuse the write (409) if someone changed it since you read it. Lock holder only (423 otherwise).',
      annotations: hints.rewrite,
    },
  }),
  operation(contract.heartbeatArtifactLock, {
    run: ({ spaceId, artifactId }, { deps, key }) =>
      heartbeatArtifactLock({ deps, spaceId, artifactId, key }),
    tool: {
      title: 'Extend an artifact lock',
      description: 'Extend the lock you hold without writing. Lock holder only (423 otherwise).',
      annotations: hints.setState,
    },
  }),
  operation(contract.unlockArtifact, {
    run: ({ spaceId, artifactId }, { deps, key }) => unlockArtifact({ deps, spaceId, artifactId, key }),
    tool: {
      title: 'Unlock an artifact',
      description:
        'Release the lock you hold so others can edit; the owner may force-unlock anyone’s lock. Returns the artifact.',
      annotations: hints.setState,
    },
  }),
  operation(contract.listArtifactVersions, {
    run: ({ spaceId, artifactId }, { deps, key }) => listArtifactVersions({ deps, spaceId, artifactId, key }),
    tool: {
      title: 'List artifact versions',
      description:
        'The version history of an artifact, newest first: version, who wrote it, when, size. Owner or participant key.',
      annotations: hints.read,
    },
  }),
  operation(contract.getArtifactVersion, {
    run: ({ spaceId, artifactId, version }, { deps, key }) =>
      getArtifactVersion({ deps, spaceId, artifactId, version, key }),
    tool: {
      title: 'Read an old artifact version',
      description: 'The artifact as it was at one version (without lock fields). Owner or participant key.',
      annotations: hints.read,
      input: versionArgs,
      toInput: versionInput,
    },
  }),
  rawOperation(contract.diffArtifactVersions, {
    openapi: {
      responses: {
        '200': {
          description:
            'A unified diff (`diff -u` format, 3 lines of context) from version `from` to version `to`; an empty body when the contents are equal.',
          content: { 'text/x-diff': { schema: { type: 'string' } } },
        },
        '400': { description: 'from or to missing or not a number' },
      },
    },
    tool: {
      title: 'Diff two artifact versions',
      description:
        'A unified diff of an artifact from version `from` to version `to`. Owner or participant key.',
      annotations: hints.read,
      input: ZArtifactPathParams.extend({ from: ZVersionArg, to: ZVersionArg }),
      output: z.object({
        from: z.number().int().min(1),
        to: z.number().int().min(1),
        diff: z.string().describe('Unified diff (text/x-diff)'),
      }),
      run: async ({ spaceId, artifactId, from, to }, { deps, key }) => ({
        from,
        to,
        diff: await diffArtifactVersions({
          deps,
          spaceId,
          artifactId,
          from: String(from),
          to: String(to),
          key,
        }),
      }),
    },
    handler: diffHandler,
  }),
  operation(contract.restoreArtifactVersion, {
    run: ({ spaceId, artifactId, version }, { deps, key }) =>
      restoreArtifactVersion({ deps, spaceId, artifactId, version, key }),
    tool: {
      title: 'Restore an artifact version',
      description:
        'Write an old version’s content as a new version (history is kept). Lock holder only (423 otherwise).',
      annotations: hints.rewrite,
      input: versionArgs,
      toInput: versionInput,
    },
  }),
];
