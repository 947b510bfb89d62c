import { ValidationError } from '@convene/core';
import { closest, distance } from 'fastest-levenshtein';

/**
 * Names a caller gives an argument by, where the operation calls it otherwise: MCP's
 * wait_for_messages' `timeoutSeconds` is list_messages', get_inbox's and REST's `wait`; a read's
 * `timestamp` is the `cursor` its answer gave; a tool's
 * `privateKey` is the key an answer named (`ownerPrivateKey`, `participantPrivateKey`,
 * `publicInvitationKey`), or a key by any name: dropped, the call would fail for want of a key.
 */
const SYNONYMS: Record<string, readonly string[]> = {
  timeoutSeconds: ['wait', 'timeout', 'waitSeconds'],
  wait: ['timeoutSeconds', 'timeout', 'waitSeconds'],
  // A read's answer names where to go on from `cursor`: given back by that name, dropped, the read
  // started again from the first message.
  timestamp: ['cursor', 'since', 'after'],
  privateKey: [
    'key',
    'apiKey',
    'spaceKey',
    'ownerKey',
    'ownerPrivateKey',
    'participantKey',
    'participantPrivateKey',
    'invitationKey',
    'publicInvitationKey',
  ],
};

/**
 * Fields of an operation's creation that its update does not take, by the update's operationId:
 * fixed once the thing is made. Ignored, as unknown fields are, the update answered `{ok: true}`
 * and the caller took a private space for made public, or a lifetime for extended; refused
 * instead, 400, saying so, before anything runs (the fields given with them are not changed).
 */
const FIXED_AT_CREATION: Record<string, Record<string, string>> = {
  updateSpace: {
    privacy:
      'privacy cannot be changed: a space stays public or private as it was created (create a new space for the other)',
    ttl: 'ttl cannot be changed: a space lives the ttl it was created with (getSpace’s ttlRemaining counts it down)',
  },
};

/** An operation's fixed fields (see FIXED_AT_CREATION), by its operationId or its MCP tool's name. */
export function fixedFieldsOf(operation: string): Readonly<Record<string, string>> | undefined {
  return FIXED_AT_CREATION[operation.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase())];
}

/**
 * A name the caller gave that the operation does not take, but that is a slip of one it takes and
 * was not given (`mention` for `mentions`, `private` for `privacy`, `spaceID` for `spaceId`,
 * `timeout` for `wait`, the start of a longer name): refused, 400, with the name meant, since
 * dropping it would do something else than asked (a message that mentions nobody, a public space,
 * a wait of the default length). A name far from every one the operation takes is ignored: a
 * request may carry fields of its own, and newer clients send fields an older server ignores.
 * `what` is how the answer calls it: an MCP tool's `argument`, a REST body's `field` (query
 * parameters are never refused: decisions.md ignores every unknown one). `fixed`: the operation's
 * fields fixed at creation (fixedFieldsOf), each refused with its reason.
 */
export function misnamed(
  given: Readonly<Record<string, unknown>>,
  names: readonly string[],
  what: 'argument' | 'field',
  fixed?: Readonly<Record<string, string>>,
): ValidationError | undefined {
  if (fixed)
    for (const name of Object.keys(given)) {
      const why = Object.hasOwn(fixed, name) && !names.includes(name) ? fixed[name] : undefined;
      if (why) return new ValidationError(why, { issues: [{ path: [name], message: why }] });
    }
  let free: string[] | undefined;
  for (const name of Object.keys(given)) {
    if (names.includes(name)) continue;
    free ??= names.filter((known) => !(known in given));
    if (free.length === 0) return undefined;
    const meant = slipOf(name, free);
    if (meant) {
      const message = `unknown ${what} "${name}": did you mean "${meant}"?`;
      return new ValidationError(message, { issues: [{ path: [name], message }] });
    }
  }
  return undefined;
}

/** Which of `free` the name `given` is a slip of, if any. */
function slipOf(given: string, free: readonly string[]): string | undefined {
  const near = closest(given, free as string[]);
  const bound = Math.min(given.length, near.length) <= 6 ? 1 : 2;
  const lower = given.toLowerCase();
  return (
    free.find((name) => name.toLowerCase() === lower) ??
    (distance(given, near) <= bound ? near : undefined) ??
    free.find((name) => SYNONYMS[name]?.some((synonym) => synonym.toLowerCase() === lower)) ??
    free.find((name) => given.length >= 4 && name.toLowerCase().startsWith(lower))
  );
}
