import { limits, type TCreateWebhookBody, type TCreateWebhookResult } from '@convene/contract';
import { and, count, eq, isNull } from 'drizzle-orm';
import { authorize, roles, whenClosedOf } from '../auth/authorize';
import { webhooks } from '../db/schema';
import type { Deps } from '../deps';
import { LimitReachedError } from '../errors';
import { newId } from '../ids';
import { mintWebhookSecret } from '../secrets';
import { refreshHasWebhooks } from './queue';
import { checkWebhookUrl, type HostLookup } from './url-policy';
import { toWebhookView } from './views';

export interface CreateWebhookOptions {
  deps: Deps;
  spaceId: string;
  key: string | undefined;
  input: TCreateWebhookBody;
  /** Test hook: how host names resolve (the system resolver by default). */
  resolve?: HostLookup;
  /** Whom the request counts against (its address's bucket): see WorkGate. */
  client?: string | undefined;
  /**
   * The URL as checkWebhookRequest found it, before any transaction opened: a host lookup may
   * take seconds, and a write under an Idempotency-Key runs in its record's transaction (on the
   * embedded database, every query of the process would wait for it). Checked here when absent.
   */
  checkedUrl?: URL | undefined;
}

/** Who registers: a member of an open space (401, 404, 409 otherwise). */
const registrant = (deps: Deps, spaceId: string, key: string | undefined) =>
  authorize(deps.db, deps.clock, {
    spaceId,
    key,
    allow: roles.member,
    whenClosed: whenClosedOf.createWebhook,
  });

/** The URL checked, its host looked up (url-policy.ts). */
const checkedUrlOf = ({ deps, input, resolve, client }: CreateWebhookOptions) =>
  checkWebhookUrl(input.url, deps.config.webhookUrls, { resolve: resolve ?? deps.lookupHost, client });

/**
 * What a registration needs before it writes: a caller who may register one, and the URL
 * checked, as createWebhook checks them.
 */
export async function checkWebhookRequest(options: Omit<CreateWebhookOptions, 'checkedUrl'>): Promise<URL> {
  await registrant(options.deps, options.spaceId, options.key);
  return checkedUrlOf(options);
}

/**
 * A participant (or the owner) registers a URL for the space's events. The URL must reach a
 * public address (config.webhookUrls decides otherwise); the signing secret is minted here,
 * returned once and kept encrypted, since signing needs it back.
 */
export async function createWebhook(options: CreateWebhookOptions): Promise<TCreateWebhookResult> {
  const { deps, spaceId, key, input, checkedUrl } = options;
  const { db, clock, box } = deps;
  const { caller } = await registrant(deps, spaceId, key);
  const participant = caller.participant!;
  const url = checkedUrl ?? (await checkedUrlOf(options));
  const secret = mintWebhookSecret();
  const row = await db.transaction(async (tx) => {
    const [existing] = await tx
      .select({ n: count() })
      .from(webhooks)
      .where(
        and(
          eq(webhooks.spaceId, spaceId),
          eq(webhooks.participantId, participant.id),
          isNull(webhooks.disabledAt),
        ),
      );
    if ((existing?.n ?? 0) >= limits.webhooksPerParticipant)
      throw new LimitReachedError(
        `a participant has at most ${limits.webhooksPerParticipant} webhooks per space`,
      );
    const [inserted] = await tx
      .insert(webhooks)
      .values({
        spaceId,
        id: newId(),
        participantId: participant.id,
        url: url.toString(),
        events: input.events ? [...new Set(input.events)] : null,
        secretEnc: await box.seal(tx, secret),
        createdAt: clock.now(),
      })
      .returning();
    // It hears of the events after this commit, and only those.
    const cursorSeq = await refreshHasWebhooks(tx, spaceId);
    await tx
      .update(webhooks)
      .set({ cursorSeq })
      .where(and(eq(webhooks.spaceId, spaceId), eq(webhooks.id, inserted!.id)));
    return inserted!;
  });
  return { ...toWebhookView(row), secret };
}
