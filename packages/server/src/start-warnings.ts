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
  if (reachable && config.databaseUrl !== undefined && isMemoryUrl(config.databaseUrl))
    warnings.push(
      `DATABASE_URL=memory:// keeps nothing, yet HOST=${config.host} lets other machines use this server: ` +
        'every space, key and message is lost when it stops; unset DATABASE_URL to keep them under DATA_DIR',
    );
  return warnings;
}
