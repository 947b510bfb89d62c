import { describe, expect, it } from 'vitest';
import { mask, unmask } from '../src/lib/markup-mask';

const MASK = '\uE000';

/** Every string of up to `length` pieces of `alphabet`. */
function strings(alphabet: string[], length: number): string[] {
  const all = [''];
  let level = [''];
  for (let i = 0; i < length; i++) {
    level = level.flatMap((text) => alphabet.map((piece) => text + piece));
    for (const text of level) all.push(text);
  }
  return all;
}

describe('mask', () => {
  it('hides from the HTML tokenizer every name the CSP is checked for while parsing', () => {
    expect(mask('<img src=x onerror=alert(1)>')).toBe(`<img src=x o${MASK}nerror=alert(1)>`);
    expect(mask('<img/src="x"onerror=a>')).toBe(`<img/src="x"o${MASK}nerror=a>`);
    expect(mask("<p\tONCLICK=a\nonfocus=b\fOnX='c'/onload>")).toBe(
      `<p\tO${MASK}NCLICK=a\no${MASK}nfocus=b\fO${MASK}nX='c'/o${MASK}nload>`,
    );
    expect(mask('<div style="x"><STYLE>a</Style>')).toBe(
      `<div s${MASK}tyle="x"><S${MASK}TYLE>a</S${MASK}tyle>`,
    );
    expect(mask('<base href=x></BASE>')).toBe(`<b${MASK}ase href=x></B${MASK}ASE>`);
    // Names that only look alike stay as they are: `<option>`, `bonus=`, `database`.
    expect(mask('<option bonus=1>database</option>')).toBe('<option bonus=1>database</option>');
  });

  it('is undone exactly by unmask, whatever the text holds (the mask character included)', () => {
    const alphabet = ['o', 'n', 's', 'b', 'tyle', 'ase', ' ', '<', '/', '"', MASK];
    for (const text of strings(alphabet, 5)) {
      const masked = mask(text);
      if (unmask(masked) !== text) expect(unmask(masked), JSON.stringify(text)).toBe(text);
      // Nothing the tokenizer could read as an on… or style attribute, or a style or base tag.
      if (/[\t\n\f\r "'/]on|style|[</]base/i.test(masked))
        expect(masked, JSON.stringify(text)).not.toMatch(/[\t\n\f\r "'/]on|style|[</]base/i);
    }
    expect(unmask('no mask here')).toBe('no mask here');
  });
});
