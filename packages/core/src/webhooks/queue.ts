import { sql } from 'drizzle-orm';
import { arrayLiteral } from '../db/array-literal';
import { rowsOf } from '../db/migrate';
import type { Executor } from '../db/types';
import type { Deps } from '../deps';
import { messageJsonSql } from '../messages/views';

/**
 * Recomputes `spaces.has_webhooks` after a webhook of the space was created, deleted or disabled,
 * and returns the space's last event id: a webhook created in the same transaction starts after it.
 * Updating the space row serialises with the writes to the space, so every event after this
 * commit sees the new value.
 */
export async function refreshHasWebhooks(ex: Executor, spaceId: string): Promise<number> {
  const [row] = rowsOf<{ event_seq: number | string }>(
    await ex.execute(sql`
      update spaces s set has_webhooks = exists (
        select 1 from webhooks w where w.space_id = s.id and w.disabled_at is null)
      where s.id = ${spaceId}
      returning s.event_seq`),
  );
  return Number(row?.event_seq ?? 0);
}

export interface QueueWebhookDeliveriesOptions {
  deps: Deps;
  /** Webhooks taken in one pass. */
  webhooks?: number;
  /** Events queued per webhook in one pass; a webhook further behind is taken again. */
  events?: number;
}

/**
 * Fills the delivery queue from the spaces' event logs: takes enabled webhooks whose cursor is
 * behind their space's last event id (locked, skipping those another node holds, so each event
 * is queued once), queues one delivery per event the webhook wants, and moves the cursor, all in
 * one transaction per webhook. A message goes to a webhook once: as `mention` when it concerns the
 * webhook's participant (their inbox has it) and the webhook takes mentions, else as `message`;
 * never to its own author's webhooks (an agent is not woken by what it said itself). A webhook
 * whose participant is no longer live gets nothing more. Returns how many were queued.
 */
export async function queueWebhookDeliveries({
  deps,
  webhooks = 32,
  events = 500,
}: QueueWebhookDeliveriesOptions): Promise<number> {
  const { db, clock } = deps;
  let queued = 0;
  for (let pass = 0; pass < webhooks; pass++) {
    const done = await db.transaction(async (tx) => {
      const [webhook] = rowsOf<{
        space_id: string;
        id: string;
        participant_id: string;
        events: string[] | string | null;
        cursor_seq: number | string;
        until: number | string;
        live: boolean;
      }>(
        await tx.execute(sql`
          select w.space_id, w.id, w.participant_id, w.events, w.cursor_seq, s.event_seq as until,
            exists (select 1 from participants p where p.space_id = w.space_id and p.id = w.participant_id
              and p.status in ('active', 'muted')) as live
          from webhooks w join spaces s on s.id = w.space_id
          where w.disabled_at is null and w.cursor_seq < s.event_seq
          limit 1
          for update of w skip locked`),
      );
      if (!webhook) return true;
      const after = Number(webhook.cursor_seq);
      let last = Number(webhook.until);
      if (webhook.live) {
        const [row] = rowsOf<{ last: number | string | null; queued: number | string; full: boolean }>(
          await tx.execute(sql`
            with wanted as (select ${webhook.events === null ? sql`null::text[]` : sql`${toPgArray(webhook.events)}::text[]`} as types),
            events as (
              select * from (
                select m.event_seq as seq, 'message'::text as kind, m.created_at as at,
                  ${messageJsonSql(sql.raw('m'))} as data, m.sender_id as sender,
                  exists (select 1 from inbox_entries ie where ie.space_id = m.space_id
                    and ie.participant_id = ${webhook.participant_id} and ie.seq = m.seq) as concerns
                from messages m
                where m.space_id = ${webhook.space_id} and m.event_seq > ${after} and m.event_seq <= ${last}
                union all
                select e.seq, e.kind, e.created_at, e.data::json, null, false
                from space_events e
                where e.space_id = ${webhook.space_id} and e.seq > ${after} and e.seq <= ${last}
              ) ev order by ev.seq limit ${events}
            ), typed as (
              select ev.seq, ev.at, ev.data, case
                when ev.kind <> 'message' then
                  case when w.types is null or ev.kind = any(w.types) then ev.kind end
                when ev.concerns and (w.types is null or 'mention' = any(w.types)) then 'mention'
                when w.types is null or 'message' = any(w.types) then 'message'
              end as type
              from events ev, wanted w
              where ev.sender is distinct from ${webhook.participant_id}::uuid
            ), queued as (
              insert into webhook_deliveries (space_id, id, webhook_id, payload, created_at, next_attempt_at)
              select ${webhook.space_id}, gen_random_uuid(), ${webhook.id},
                json_build_object(
                  'type', t.type,
                  'timestamp', to_char(t.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                  'spaceId', ${webhook.space_id}::text,
                  'data', t.data
                )::text,
                t.at, ${clock.now().toISOString()}::timestamptz
              from typed t where t.type is not null
              order by t.seq
              returning 1
            )
            select (select max(seq) from events) as last, (select count(*) from queued) as queued,
              (select count(*) from events) >= ${events} as full`),
        );
        queued += Number(row?.queued ?? 0);
        // A full page: carry on from its last event next time.
        if (row?.full && row.last !== null) last = Number(row.last);
      }
      await tx.execute(sql`
        update webhooks set cursor_seq = ${last}
        where space_id = ${webhook.space_id} and id = ${webhook.id}`);
      return false;
    });
    if (done) break;
  }
  return queued;
}

/** A text[] column's value as a parameter: an array (PGlite, postgres.js) or its text form already. */
const toPgArray = (value: string[] | string): string => (Array.isArray(value) ? arrayLiteral(value) : value);
