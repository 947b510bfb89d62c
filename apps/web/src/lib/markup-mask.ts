/**
 * Chromium checks some markup against the page's Content-Security-Policy the moment its HTML
 * parser meets it, even in an inert document (the one DOMPurify parses into, a <template>'s and
 * the Sanitizer API's alike): an event-handler attribute (`on…`), a `style` attribute, a <style>
 * or a <base> element. Nothing runs, but each is reported as a violation, and a hostile message
 * could fill the console with them and hide a real one.
 *
 * So those names are masked before the markup is parsed: a private-use character after their
 * first letter, which no tokenizer state treats as special, makes `onerror` `o\uE000nerror` (an
 * attribute that means nothing), `style` `s\uE000tyle` and `<base` `<b\uE000ase`. The sanitiser never
 * lets such names through. Text and attribute values get their characters back with `unmask`
 * before the sanitiser judges them. Masking is exact: `unmask(mask(s)) === s` for every string.
 */

const MASK = '\uE000';

/**
 * Where such a name can begin: an attribute name starts after whitespace, `/` or a closing quote
 * (the HTML tokenizer's "before attribute name" paths); a tag name after `<` or `</`. `style` is
 * masked wherever it appears, which covers the attribute and the element alike.
 */
const CHECKED_AT_PARSE = /(?<=[\t\n\f\r "'/])o(?=n)|s(?=tyle)|(?<=[</])b(?=ase)/gi;

/** The markup with every name the browser would check against the CSP while parsing masked. */
export function mask(markup: string): string {
  // A mask already in the text is doubled, so unmask can tell it from the ones added here.
  return markup.replaceAll(MASK, MASK + MASK).replace(CHECKED_AT_PARSE, (letter) => letter + MASK);
}

/** A text or attribute value of masked markup, as it was written. */
export function unmask(value: string): string {
  return value.includes(MASK) ? value.replace(/\uE000(\uE000?)/g, '$1') : value;
}
