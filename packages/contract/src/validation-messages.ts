import { z } from 'zod';

/** The raw issue a zod error map is handed. */
type RawIssue = Parameters<z.core.$ZodErrorMap>[0];

/** How an issue's path reads in a message: `name`, `mentions.0`, or `the body` at the top. */
export function issueField(path: readonly PropertyKey[] | undefined): string {
  return path?.length ? path.map(String).join('.') : 'the body';
}

/** The characters nothing draws: a zero-width space or joiner, a soft hyphen, the marks of direction, variation selectors, the Hangul fillers, the blank Braille pattern. */
const INVISIBLE =
  '\\u00AD\\u034F\\u061C\\u115F\\u1160\\u17B4\\u17B5\\u180B-\\u180F\\u200B-\\u200F\\u202A-\\u202E\\u2060-\\u206F\\u2800\\u3164\\uFE00-\\uFE0F\\uFEFF\\uFFA0';
/** Control characters: C0 (line breaks, the tab, the escape), DEL, C1, and the Unicode line and paragraph separators. */
const CONTROL = '\\x00-\\x1F\\x7F-\\x9F\\u2028\\u2029';
/** White space that is no control character. */
const SPACE = '\\u0020\\u00A0\\u1680\\u2000-\\u200A\\u202F\\u205F\\u3000';

/**
 * What a name matches: one line that shows something. Not blank: a character that shows, other
 * than white space and the characters nothing draws (INVISIBLE), which alone read as nothing in a
 * list, a mention or a page. No control character: a name is one line of a list, a transcript or
 * a terminal, where `Ada\n[10:02] Owner: …` would pass for a message the owner never sent, and an
 * escape sequence would recolour or rewrite the terminal.
 *
 * One pattern, as JSON Schema's `pattern` (OpenAPI, the MCP tools) publishes it: blanks, then the
 * first character that shows, then anything but a control character. Linear (the blanks and the
 * character that shows are disjoint, so nothing is tried twice), as it must be: it runs before the
 * length is checked. Spelt as classes of escapes without flags, the same test with or without `u`.
 */
export const NAME_PATTERN = new RegExp(`^[${SPACE}${INVISIBLE}]*[^\\s${CONTROL}${INVISIBLE}][^${CONTROL}]*$`);

/** A name NAME_PATTERN refuses of white space and invisible characters alone is blank; any other, for its control characters. */
const BLANK = new RegExp(`^[\\s${INVISIBLE}]*$`);

const article = (noun: string) => (/^[aeiou]/.test(noun) ? `an ${noun}` : `a ${noun}`);

/** What the formats of the contract's strings are called in a message. */
const FORMATS: Record<string, string> = {
  uuid: 'a UUID',
  guid: 'a UUID',
  url: 'a URL',
  email: 'an e-mail address',
  datetime: 'an ISO 8601 date-time',
  date: 'an ISO 8601 date',
};

/** The unit of a size, by what is measured. */
const SIZES: Record<string, string> = { string: 'character', array: 'item', set: 'item', file: 'byte' };

/** `is at most 200 characters`, `is at least 1`, `is less than 5`: a size or a value's bound. */
function bound(origin: string, limit: number | bigint | Date, inclusive: boolean | undefined, most: boolean) {
  const unit = SIZES[origin];
  const value = limit instanceof Date ? limit.toISOString() : String(limit);
  if (unit) return `${most ? 'is at most' : 'is at least'} ${value} ${unit}${value === '1' ? '' : 's'}`;
  if (inclusive === false) return `${most ? 'is less than' : 'is more than'} ${value}`;
  return `${most ? 'is at most' : 'is at least'} ${value}`;
}

/**
 * The message of an issue the schema has none of its own for, in the words of the contract's own
 * messages (`name is at most 200 characters`, `type must be one of "text", "image", "html"`),
 * naming the field: what a person reads in a 400's `error` and in each of its `issues`. Undefined
 * for the rarer kinds, which keep zod's wording. A schema's own message always wins over it.
 */
export function readableIssueMessage(issue: RawIssue): string | undefined {
  const field = issueField(issue.path);
  // A field left out, whatever it should have been (a string, one of a list).
  if ((issue.code === 'invalid_type' || issue.code === 'invalid_value') && issue.input === undefined)
    return `${field} is required`;
  switch (issue.code) {
    case 'invalid_type': {
      const expected = issue.expected === 'int' ? 'integer' : String(issue.expected);
      return `${field} must be ${article(expected)}`;
    }
    case 'too_big':
      return `${field} ${bound(issue.origin, issue.maximum, issue.inclusive, true)}`;
    case 'too_small':
      if (issue.origin === 'string' && Number(issue.minimum) === 1) return `${field} must not be empty`;
      return `${field} ${bound(issue.origin, issue.minimum, issue.inclusive, false)}`;
    case 'invalid_value':
      return issue.values.length === 1
        ? `${field} must be ${JSON.stringify(issue.values[0])}`
        : `${field} must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'invalid_format': {
      if (issue.format === 'regex' && issue.pattern === String(NAME_PATTERN))
        return typeof issue.input === 'string' && !BLANK.test(issue.input)
          ? `${field} must be one line without control characters (a line break, a tab, an escape)`
          : `${field} must not be blank`;
      const format = FORMATS[issue.format];
      return format ? `${field} must be ${format}` : undefined;
    }
    case 'not_multiple_of':
      return `${field} must be a multiple of ${String(issue.divisor)}`;
    default:
      return undefined;
  }
}

/**
 * Has every schema's issues say readableIssueMessage, where the schema has no message of its own:
 * an application (the server) calls it once; a library importing the contract never does, as it
 * sets the one zod configuration of the process.
 */
export function useReadableValidationMessages(): void {
  z.config({ customError: readableIssueMessage });
}
