import { isIP } from 'node:net';
import { isMemoryUrl } from '@convene/core';
import type { ServerConfig } from './env';

/** Whether a host name or address names this machine only. */
export function isLoopbackHost(host: string): boolean {
  const name = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  if (isIP(name) === 4) return name.startsWith('127.');
  if (isIP(name) === 6) return name === '::1' || name.startsWith('::ffff:127.');
  return false;
}

/**
 * The ports browsers and `fetch` refuse to connect to (the Fetch standard's "bad port" list, which
 * Node's fetch follows too): a server there serves `curl` and the CLI, but not its own web pages,
 * nor an application calling it with fetch (the SDK).
 */
export const FETCH_BAD_PORTS: ReadonlySet<number> = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104,
  109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515,
  526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049,
  3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

/**
 * What a configuration does that its operator most likely did not mean, said once at start as
 * warnings: none of it is refused, since each can be right somewhere (a test on a LAN, a demo),
 * but each passed without a word in an operator's trial (s26, finding 11).
 */
export function startWarnings(config: ServerConfig): string[] {
  const warnings: string[] = [];
  const publicUrl = new URL(config.publicUrl);
  const reachable = !isLoopbackHost(config.host);
  if (reachable && isLoopbackHost(publicUrl.hostname))
    warnings.push(
      `HOST=${config.host} takes connections from other machines, but the links this server hands out ` +
        `(invitations, agent cards, avatars, discovery documents) start with ${config.publicUrl}, ` +
        'which names this machine only: set PUBLIC_URL to the address people reach it by',
    );
  if (publicUrl.protocol === 'http:' && !isLoopbackHost(publicUrl.hostname))
    warnings.push(
      `PUBLIC_URL ${config.publicUrl} is plain http: keys and tokens cross the network in clear; ` +
        'serve it over HTTPS (a proxy that terminates TLS) and set PUBLIC_URL to its https:// address',
    );
  // Links, Location headers and the documents' URLs carry the path; the pages do not, nor do the
  // well-known addresses clients derive from an issuer: the server answers at the host's root.
  if (publicUrl.pathname !== '/')
    warnings.push(
      `PUBLIC_URL ${config.publicUrl} has a path (${publicUrl.pathname}), which the links this server hands out carry, ` +
        `but the server answers at the root: its web pages load their files and call the API at ${publicUrl.origin}/web/… ` +
        `and ${publicUrl.origin}/hub/…, and OAuth clients look for its metadata at ${publicUrl.origin}/.well-known/…, ` +
        'outside the path, so behind a proxy that strips it they fail; give Convene a host name of its own ' +
        '(https://convene.example.com)',
    );
  // The port people reach it by: PUBLIC_URL's (PORT's unless set), not PORT behind a proxy.
  const port = Number(publicUrl.port || (publicUrl.protocol === 'https:' ? 443 : 80));
  if (FETCH_BAD_PORTS.has(port))
    warnings.push(
      `PUBLIC_URL ${config.publicUrl} is on port ${port}, which browsers and fetch refuse to connect to ` +
        '(a "bad port" of the Fetch standard): the web pages will not open, and the SDK (Node’s fetch) ' +
        'cannot reach it; curl and the CLI can. Choose another port (PORT, and PUBLIC_URL if set)',
    );
  for (const [given, meant] of config.settingSlips ?? [])
    warnings.push(
      `${given} is set, which is no setting of Convene and is ignored: did you mean ${meant}?` +
        (meant === 'DATABASE_URL' && config.databaseUrl === undefined
          ? ' (DATABASE_URL is unset: this node keeps its data in an embedded database under DATA_DIR)'
          : ''),
    );
  if (reachable && config.databaseUrl !== undefined && isMemoryUrl(config.databaseUrl))
    warnings.push(
      `DATABASE_URL=memory:// keeps nothing, yet HOST=${config.host} lets other machines use this server: ` +
        'every space, key and message is lost when it stops; unset DATABASE_URL to keep them under DATA_DIR',
    );
  return warnings;
}
