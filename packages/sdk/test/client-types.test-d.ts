/**
 * What the client's methods are typed to return, checked by `tsc` (`pnpm typecheck`): a wrong
 * overload fails the type check here, before a caller meets it at run time.
 */
import type { Convene, JoinOptions, PendingJoin, SpaceClient } from '../src';

/** True when A and B are the same type (not merely assignable to each other). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Joined<T> = T extends PromiseLike<infer R> ? R : never;

declare const hub: Convene;
declare const link: string;
declare const options: JoinOptions;

// Waiting (the default), a join resolves with the space client only.
const waited = hub.join(link, { name: 'a' });
export const waitedClient: Equal<Joined<typeof waited>, SpaceClient> = true;
const waitedByKey = hub.join('space', 'key', { name: 'a', wait: true });
export const waitedByKeyClient: Equal<Joined<typeof waitedByKey>, SpaceClient> = true;

// `wait: false`, or a `wait` only known at run time, may resolve with a PendingJoin.
const notWaited = hub.join(link, { name: 'a', wait: false });
export const notWaitedEither: Equal<Joined<typeof notWaited>, SpaceClient | PendingJoin> = true;
const unknown = hub.join(link, options);
export const unknownEither: Equal<Joined<typeof unknown>, SpaceClient | PendingJoin> = true;
const unknownByKey = hub.join('space', 'key', options);
export const unknownByKeyEither: Equal<Joined<typeof unknownByKey>, SpaceClient | PendingJoin> = true;
