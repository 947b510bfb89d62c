import { CliError, UsageError } from './errors';
import { ExitCode } from './exit-codes';

/**
 * Finds a participant or an artifact by what a person would type: its id, its name (any case),
 * or the start of its id (4 characters or more). Two of the same name ask for the id.
 */
export function pick<T>(
  items: readonly T[],
  reference: string,
  what: { noun: string; id: (item: T) => string; name: (item: T) => string; listCommand: string },
): T {
  const exact = items.find((item) => what.id(item) === reference);
  if (exact) return exact;
  const named = items.filter((item) => what.name(item).toLowerCase() === reference.toLowerCase());
  if (named.length === 1) return named[0]!;
  if (named.length > 1) {
    throw new UsageError(
      `${named.length} ${what.noun}s are called "${reference}"`,
      `Name one by id: ${named.map(what.id).join(', ')}`,
    );
  }
  const prefixed =
    reference.length >= 4 ? items.filter((item) => what.id(item).startsWith(reference.toLowerCase())) : [];
  if (prefixed.length === 1) return prefixed[0]!;
  throw new CliError(`no ${what.noun} "${reference}"`, {
    exitCode: ExitCode.notFound,
    hint: `See them with \`${what.listCommand}\`.`,
  });
}
