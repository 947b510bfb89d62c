import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { RateLimitedError, ValidationError } from '../errors';
import { within } from '../infra/within';
import { WorkGate } from '../infra/work-gate';

/** Where webhooks may point. By default only public unicast addresses (no SSRF). */
export interface WebhookUrlPolicy {
  /** Allow loopback, private, link-local and every other non-public range (the operator's call). */
  allowPrivate: boolean;
  /** Addresses or CIDR ranges allowed even though they are not public (e.g. `10.1.0.0/16`). */
  allowNetworks: readonly string[];
}

export const defaultWebhookUrlPolicy: WebhookUrlPolicy = { allowPrivate: false, allowNetworks: [] };

/**
 * Whether a webhook may reach `address`. The same rule as the delivering agent's
 * (request-filtering-agent): a listed network is allowed; the unspecified address never is;
 * anything but public unicast (loopback, private, link-local, unique-local, carrier-grade NAT,
 * multicast, reserved, IPv4-mapped…) only with `allowPrivate`.
 */
export function addressAllowed(address: string, policy: WebhookUrlPolicy): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.parse(address);
  for (const entry of policy.allowNetworks) {
    if (isIP(entry) !== 0) {
      if (ipaddr.parse(entry).toNormalizedString() === parsed.toNormalizedString()) return true;
    } else if (ipaddr.isValidCIDR(entry)) {
      const range = ipaddr.parseCIDR(entry);
      if (range[0].kind() === parsed.kind() && parsed.match(range)) return true;
    }
  }
  const range = parsed.range();
  if (range === 'unspecified') return false;
  // IPv4-compatible IPv6 (::a.b.c.d, deprecated by RFC 4291) reaches the IPv4 address on hosts
  // with a compatible tunnel; ipaddr.js calls it unicast.
  const compatible = parsed.kind() === 'ipv6' && parsed.match(IPV4_COMPATIBLE);
  return (range === 'unicast' && !compatible) || policy.allowPrivate;
}

const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

export type HostLookup = (hostname: string) => Promise<string[]>;

const systemLookup: HostLookup = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

/**
 * The system's lookup holds a worker thread until its resolver gives up, which a name whose
 * servers never answer makes tens of seconds, and cannot be called off. A registration waits no
 * longer than LOOKUP_TIMEOUT_MS for it (queue included), but the lookup keeps its place in the
 * gate until it truly ends: at most two threads of the process are ever held by lookups, and an
 * address has two lookups at most (a third is 429, retry when the lookup would have timed out).
 */
export const LOOKUP_TIMEOUT_MS = 5_000;
const hostLookups = new WorkGate(
  2,
  2,
  'webhook URLs of this address are being checked already: retry shortly',
  LOOKUP_TIMEOUT_MS / 1000,
);

/** Where the webhook check looks host names up, from whom, and how long it waits. */
export interface LookupOptions {
  resolve?: HostLookup | undefined;
  /** Whom the request counts against (its address's bucket): see WorkGate. */
  client?: string | undefined;
  timeoutMs?: number;
  /** The gate the lookups take turns in (this process's by default; tests give their own). */
  gate?: WorkGate;
}

/** `host`'s addresses, or undefined when the lookup took longer than `timeoutMs`. */
async function lookUp(
  host: string,
  { resolve = systemLookup, client, timeoutMs, gate = hostLookups }: LookupOptions & { timeoutMs: number },
): Promise<string[] | undefined> {
  const lookup = gate.run(client, () => resolve(host));
  // Answered by the timer, the lookup still runs to its end in the gate: nothing waits on it.
  lookup.catch(() => {});
  return within(lookup, timeoutMs, undefined);
}

/**
 * A webhook URL as registered: http: or https:, no credentials in it, and a host whose every
 * address is allowed (checked again at each delivery, when it connects, against DNS rebinding).
 * Anything else is a 400 that says why.
 */
export async function checkWebhookUrl(
  raw: string,
  policy: WebhookUrlPolicy,
  lookupOptions: LookupOptions = {},
): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ValidationError('url must be an absolute http: or https: URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new ValidationError('url must be an absolute http: or https: URL');
  if (url.username || url.password) throw new ValidationError('url must not carry credentials');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!host) throw new ValidationError('url must name a host');
  let addresses: string[];
  if (isIP(host) !== 0) addresses = [host];
  else {
    const { timeoutMs = LOOKUP_TIMEOUT_MS } = lookupOptions;
    let found: string[] | undefined;
    try {
      found = await lookUp(host, { ...lookupOptions, timeoutMs });
    } catch (error) {
      if (error instanceof RateLimitedError) throw error;
      throw new ValidationError(`url's host ${host} does not resolve`);
    }
    if (found === undefined)
      throw new ValidationError(`url's host ${host} did not resolve within ${timeoutMs / 1000} s`);
    addresses = found;
  }
  const refused = addresses.find((address) => !addressAllowed(address, policy));
  if (refused !== undefined || addresses.length === 0) {
    const why = whyRefused(refused, policy);
    throw new ValidationError(
      `url's host ${host} resolves to ${refused ?? 'nothing'}: ${why}`,
      {},
      why === PRIVATE_REFUSED ? 'webhook_address_private' : undefined,
    );
  }
  return url;
}

/** Why an address is refused, by the rule that refuses it (the unspecified one even when private ones are allowed). */
function whyRefused(address: string | undefined, policy: WebhookUrlPolicy): string {
  if (address !== undefined && ipaddr.isValid(address) && ipaddr.parse(address).range() === 'unspecified')
    return 'the unspecified address (0.0.0.0, ::) is never allowed';
  if (policy.allowPrivate) return 'not an address webhooks may reach';
  return PRIVATE_REFUSED;
}

/** The refusal the operator can lift (its own code, so that a client can say how). */
const PRIVATE_REFUSED = 'loopback, private and link-local addresses are not allowed';
