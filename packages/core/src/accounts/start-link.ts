import type { TStartLinkRequest, TStartLinkResult } from '@convene/contract';
import { linkRequests } from '../db/schema';
import type { Deps } from '../deps';
import { newId } from '../ids';
import { hashSecret, mintDeviceCode, mintUserCode } from '../secrets';
import { sweepExpiredLinks } from './link-requests';
import { formatUserCode } from './user-code';

export interface StartLinkOptions {
  deps: Deps;
  input: TStartLinkRequest;
}

/** Suggested seconds between polls (RFC 8628 `interval`); faster polls are still answered. */
export const LINK_POLL_INTERVAL_SECONDS = 5;

/**
 * Opens a browser-link request (RFC 8628 style). Only hashes of the device code are stored; the
 * user code is short and shown to a human, so it is kept as is and is unique while it exists.
 */
export async function startLink({ deps, input }: StartLinkOptions): Promise<TStartLinkResult> {
  const { db, clock, config } = deps;
  const now = clock.now();
  await sweepExpiredLinks(db, now);
  for (let attempt = 0; attempt < 5; attempt++) {
    const deviceCode = mintDeviceCode();
    const userCode = mintUserCode();
    const [row] = await db
      .insert(linkRequests)
      .values({
        id: newId(),
        deviceCodeHash: hashSecret(deviceCode),
        userCode,
        agentName: input.agentName ?? null,
        status: 'pending',
        createdAt: now,
        expiresAt: new Date(now.getTime() + config.linkTtlSeconds * 1000),
      })
      // A user code still held by another request: draw again.
      .onConflictDoNothing()
      .returning({ id: linkRequests.id });
    if (!row) continue;
    const shown = formatUserCode(userCode);
    return {
      deviceCode,
      verificationUri: `${config.publicUrl}/link`,
      verificationUriComplete: `${config.publicUrl}/link?code=${shown}`,
      expiresIn: config.linkTtlSeconds,
      interval: LINK_POLL_INTERVAL_SECONDS,
      userCode: shown,
    };
  }
  throw new Error('could not allocate a unique user code');
}
