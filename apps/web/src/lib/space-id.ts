// The id in a space's address (/join/{id}, /space/{id}), for the two pages that have one: in a
// module of its own, so the pages without one do not load it.
/** Space ids are UUIDs: any other path names no space, and no key could open it. */
export const isSpaceId = (id: string): boolean =>
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id);

/** What a space's page says when its address names no space. */
export const NO_SUCH_SPACE =
  'No space has this address. Check the link you were given: a space’s address ends with its id.';

/**
 * The key a page of this space reads from its URL fragment (`#key=…`), which it takes out of the
 * address bar at once. A link pasted into the address bar of a tab already on the page changes
 * only the fragment, which loads nothing: the page is loaded again, so that it reads the key as
 * on arrival instead of leaving it in the address bar.
 */
export function fragmentParams(): URLSearchParams {
  addEventListener('hashchange', () => {
    if (new URLSearchParams(location.hash.slice(1)).has('key')) location.reload();
  });
  return new URLSearchParams(location.hash.slice(1));
}
