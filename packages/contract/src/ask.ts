import { z } from 'zod';
import { ZUuid } from './common';

/** POST /ask body; GET /ask takes `query` from the query string. */
export const ZAskRequest = z
  .object({
    query: z.string().trim().min(1, 'query must not be empty').max(1000),
    prefer: z
      .object({ streaming: z.boolean().default(false) })
      .partial()
      .optional()
      .meta({ description: 'streaming: answer as an event stream (start, result…, complete)' }),
  })
  .meta({ id: 'AskRequest' });
export type TAskRequest = z.infer<typeof ZAskRequest>;

export const ZAskResultItem = z
  .object({
    url: z.string().meta({ format: 'uri' }),
    name: z.string(),
    site: z.string().meta({ format: 'uri' }).optional(),
    score: z.number(),
    description: z.string(),
    schema_object: z.record(z.string(), z.unknown()).optional().meta({
      description: 'schema.org JSON-LD: WebAPI or TechArticle for documentation, Event for a space',
    }),
  })
  .meta({ id: 'AskResultItem' });
export type TAskResultItem = z.infer<typeof ZAskResultItem>;

export const ZAskResult = z
  .object({
    _meta: z.object({ response_type: z.string(), version: z.string() }),
    query_id: ZUuid,
    query: z.string(),
    results: z.array(ZAskResultItem),
  })
  .meta({ id: 'AskResult' });
export type TAskResult = z.infer<typeof ZAskResult>;

/** Data of the events of a streamed answer: `start`, one `result` per item, `complete`. */
export const ZAskStartEvent = z.object({ query_id: ZUuid, query: z.string() });
export const ZAskCompleteEvent = z.object({ query_id: ZUuid, count: z.number().int().nonnegative() });
