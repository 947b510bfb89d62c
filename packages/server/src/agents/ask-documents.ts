import { existsSync, readFileSync } from 'node:fs';
import type { AskDocument } from '@convene/core';
import { toolName } from '../mcp/tool';

/** The guides /ask searches and serves, by the path they are served at. */
export const GUIDES = [
  { file: 'agent-guide.md', url: new URL('../../content/agent-guide.md', import.meta.url) },
  { file: 'auth.md', url: new URL('../../content/auth.md', import.meta.url) },
] as const;

/** A guide's text with `{PUBLIC_URL}` filled in, or undefined while the file does not exist. */
export function readGuide(url: URL, publicUrl: string): string | undefined {
  if (!existsSync(url)) return undefined;
  return readFileSync(url, 'utf8').replaceAll('{PUBLIC_URL}', publicUrl);
}

interface OpenApiOperation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  security?: Record<string, unknown>[];
  responses?: Record<string, unknown>;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

const CREDENTIALS: Record<string, string> = {
  spaceKey: 'a space key in X-Private-Key',
  userToken: 'a usr_ user token in X-User-Token',
  dashboardJwt: 'a dashboard JWT (Authorization: Bearer)',
};

/** `lockArtifact` → `lock artifact`, so full-text search sees the words of an operationId. */
export const words = (operationId: string): string =>
  operationId.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();

/**
 * A path as one JSON Pointer segment (RFC 6901), written for a URI fragment pointing into
 * /openapi.json: percent-encoded (its section 6), since `{` and `}` may not stand in a URI.
 */
const pointer = (segment: string) => encodeURIComponent(segment.replaceAll('~', '~0').replaceAll('/', '~1'));

/** One document per operation of the OpenAPI document. */
export function operationDocuments(
  openapi: { paths?: Record<string, Record<string, unknown>> },
  toolNames: ReadonlySet<string>,
): AskDocument[] {
  const documents: AskDocument[] = [];
  for (const [path, item] of Object.entries(openapi.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item[method] as OpenApiOperation | undefined;
      if (!operation?.operationId) continue;
      const { operationId } = operation;
      const tool = toolNames.has(toolName(operationId)) ? toolName(operationId) : undefined;
      const summary = operation.summary ?? words(operationId);
      const schemes = (operation.security ?? []).flatMap((s) => Object.keys(s));
      const auth = schemes.length
        ? `Needs ${schemes.map((s) => CREDENTIALS[s] ?? s).join(' or ')}.`
        : 'Public: no credential needed.';
      const statuses = Object.keys(operation.responses ?? {}).join(', ');
      const verb = method.toUpperCase();
      const description = `${summary}. ${verb} ${path}. ${auth}${tool ? ` MCP tool: ${tool}.` : ''}`;
      documents.push({
        id: `operation:${operationId}`,
        kind: 'operation',
        path: `/openapi.json#/paths/${pointer(path)}/${method}`,
        name: `${capitalise(words(operationId))} (${operationId})`,
        description,
        body: [
          operation.description ?? '',
          `Operation ${operationId} (${words(operationId)}) of the REST API: ${verb} ${path}.`,
          `Tags: ${(operation.tags ?? []).join(', ')}. Responses: ${statuses}.`,
        ].join('\n'),
        data: { operationId, method: verb, pathTemplate: path, ...(tool ? { tool } : {}) },
      });
    }
  }
  return documents;
}

/**
 * One document per `##` section of a markdown guide (the part before the first section is the
 * guide's introduction), each pointing at its heading's anchor.
 */
export function guideDocuments(file: string, markdown: string): AskDocument[] {
  const title = markdown.match(/^# (.+)$/m)?.[1]?.trim() ?? file;
  const parts = markdown.split(/^(?=## )/m);
  const documents: AskDocument[] = [];
  for (const part of parts) {
    const heading = part.match(/^## (.+)$/m)?.[1]?.trim();
    const text = part.replace(/^#{1,2} .+$/gm, '').trim();
    if (!text) continue;
    const section = heading ?? title;
    const slug = heading ? slugify(heading) : '';
    documents.push({
      id: `guide:${file}#${slug}`,
      kind: 'guide',
      path: `/${file}${slug ? `#${slug}` : ''}`,
      name: heading ? `${title}: ${heading}` : title,
      description: firstParagraph(text),
      body: text,
      data: { guide: file, guideTitle: title, section },
    });
  }
  return documents;
}

/** GitHub-style heading anchors: lower case, punctuation dropped, spaces to hyphens. */
export const slugify = (heading: string): string =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s-]/gu, '')
    .trim()
    .replace(/\s/g, '-');

const capitalise = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

function firstParagraph(text: string): string {
  const paragraph =
    text
      .split(/\n\s*\n/)
      .map((p) => p.trim())
      .find((p) => p && !p.startsWith('```') && !p.startsWith('|')) ?? text;
  const flat = paragraph.replace(/\s+/g, ' ');
  return flat.length > 300 ? `${flat.slice(0, 297)}…` : flat;
}
