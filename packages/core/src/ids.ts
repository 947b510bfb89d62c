import { randomUUID } from 'node:crypto';

export const newId = (): string => randomUUID();

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A path id that is not a UUID names nothing: callers answer 404 for it. */
export const isUuid = (value: string): boolean => UUID_RE.test(value);
