import { type Clock, ValidationError } from '@convene/core';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** One major version of the API and where it stands. */
export interface ApiVersionEntry {
  version: string;
  status: 'current' | 'deprecated';
  /** When the deprecation was announced (the `Deprecation` header); ISO 8601. */
  deprecatedAt?: string;
  /** When it stops being served (the `Sunset` header); at least the window after `deprecatedAt`. */
  sunsetAt?: string;
}

/**
 * The one table of versions. It drives the `API-Version`, `Deprecation` and `Sunset` headers
 * and the document at `/.well-known/deprecation-policy`, so the two cannot disagree.
 */
export interface VersionPolicy {
  /** The version served when a request names none. */
  current: string;
  /** Minimum days a deprecated version keeps working before its sunset. */
  deprecationWindowDays: number;
  versions: ApiVersionEntry[];
}

export const defaultVersionPolicy: VersionPolicy = {
  current: '1',
  deprecationWindowDays: 90,
  versions: [{ version: '1', status: 'current' }],
};

const DAY_MS = 86_400_000;

/** Refuses a table that breaks the promise: one current version, a window of 90 days at least. */
export function validateVersionPolicy(policy: VersionPolicy): void {
  const problems: string[] = [];
  if (policy.deprecationWindowDays < 90) problems.push('the deprecation window must be at least 90 days');
  const current = policy.versions.filter((v) => v.status === 'current');
  if (current.length !== 1 || current[0]?.version !== policy.current)
    problems.push(`exactly one version, "${policy.current}", must be current`);
  for (const v of policy.versions) {
    if (v.status !== 'deprecated') continue;
    const deprecated = Date.parse(v.deprecatedAt ?? '');
    const sunset = Date.parse(v.sunsetAt ?? '');
    if (Number.isNaN(deprecated) || Number.isNaN(sunset))
      problems.push(`deprecated version ${v.version} needs deprecatedAt and sunsetAt dates`);
    else if (sunset - deprecated < policy.deprecationWindowDays * DAY_MS)
      problems.push(
        `version ${v.version} sunsets less than ${policy.deprecationWindowDays} days after its deprecation`,
      );
  }
  if (problems.length) throw new Error(`invalid API version policy: ${problems.join('; ')}`);
}

/** `API-Version` plus what announces a deprecation; the document lists the same names. */
export const VERSION_HEADERS = ['api-version', 'deprecation', 'sunset', 'link'];

interface Served {
  entry: ApiVersionEntry;
  headers: Record<string, string>;
  sunset: number;
}

export interface VersioningOptions {
  policy: VersionPolicy;
  clock: Clock;
  publicUrl: string;
}

const rejected = new WeakMap<FastifyRequest, string>();

/**
 * Two steps of the onRequest hook, around the rate limit: `resolve` sets the version headers first, so every
 * answer (a 429 included) carries them; `enforce` refuses an unsupported or retired version
 * with 400 after the rate limit has counted the request and set its headers.
 */
export function versioningHooks({ policy, clock, publicUrl }: VersioningOptions) {
  validateVersionPolicy(policy);
  const link = `<${publicUrl}/.well-known/deprecation-policy>; rel="deprecation"; type="application/json"`;
  const served = new Map<string, Served>();
  for (const entry of policy.versions) {
    const headers: Record<string, string> = { 'API-Version': entry.version };
    let sunset = Number.POSITIVE_INFINITY;
    if (entry.status === 'deprecated' && entry.deprecatedAt && entry.sunsetAt) {
      sunset = Date.parse(entry.sunsetAt);
      // RFC 9745: a structured-field date; RFC 8594: an HTTP-date.
      headers.Deprecation = `@${Math.floor(Date.parse(entry.deprecatedAt) / 1000)}`;
      headers.Sunset = new Date(sunset).toUTCString();
      headers.Link = link;
    }
    served.set(entry.version, { entry, headers, sunset });
  }
  const currentHeaders = { 'API-Version': policy.current };

  const resolve = (request: FastifyRequest, reply: FastifyReply): void => {
    const header = request.headers['api-version'];
    const requested = (Array.isArray(header) ? header[0] : header)?.trim();
    if (requested === undefined || requested === policy.current) {
      reply.headers(currentHeaders);
      return;
    }
    const version = served.get(requested);
    if (version && clock.now().getTime() < version.sunset) {
      reply.headers(version.headers);
      return;
    }
    reply.headers(currentHeaders);
    rejected.set(
      request,
      version
        ? `API-Version ${requested} was retired on ${version.entry.sunsetAt}; use ${policy.current}`
        : `unsupported API-Version "${requested}"; supported: ${supportedVersions(policy, clock.now()).join(', ')}`,
    );
  };

  const enforce = (request: FastifyRequest): void => {
    const problem = rejected.get(request);
    if (problem) throw new ValidationError(problem, {}, 'unsupported_api_version');
  };

  return { resolve, enforce };
}

/** Versions still served at `now`, current first. */
export function supportedVersions(policy: VersionPolicy, now: Date): string[] {
  return [
    policy.current,
    ...policy.versions
      .filter((v) => v.status === 'deprecated' && Date.parse(v.sunsetAt ?? '') > now.getTime())
      .map((v) => v.version),
  ];
}

/** The machine-readable deprecation policy, from the same table as the headers. */
export function deprecationPolicyDocument(policy: VersionPolicy, now: Date, publicUrl: string) {
  return {
    currentVersion: policy.current,
    defaultVersion: policy.current,
    versionHeader: 'API-Version',
    supportedVersions: supportedVersions(policy, now),
    deprecationWindowDays: policy.deprecationWindowDays,
    deprecationHeaders: ['Deprecation', 'Sunset', 'Link'],
    versions: policy.versions.map((v) => ({
      version: v.version,
      status:
        v.status === 'deprecated' && Date.parse(v.sunsetAt ?? '') <= now.getTime() ? 'retired' : v.status,
      ...(v.deprecatedAt ? { deprecatedAt: new Date(v.deprecatedAt).toISOString() } : {}),
      ...(v.sunsetAt ? { sunsetAt: new Date(v.sunsetAt).toISOString() } : {}),
    })),
    policy:
      `Versioning is by the API-Version request header (default ${policy.current}); every response ` +
      'carries the version it was served with. Additive changes never bump the version. A breaking ' +
      `change bumps the major version, and the outgoing one keeps working for at least ` +
      `${policy.deprecationWindowDays} days: its responses carry Deprecation (RFC 9745), Sunset ` +
      '(RFC 8594) and a Link with rel="deprecation" to this document. After its sunset a version ' +
      'is refused with 400.',
    documentation: `${publicUrl}/openapi.json`,
  };
}
