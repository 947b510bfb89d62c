// Bidi controls in what people wrote: shown, never obeyed where they could disguise it. Every page
// shows names, so this module is as small as it can be.

/** Writes each character `controls` matches as its code point ("[U+202E]"): shown, never obeyed. */
const reveal = (text: string, controls: RegExp): string =>
  text.replace(controls, (c) => `[U+${c.charCodeAt(0).toString(16).toUpperCase()}]`);

/**
 * A name (of a participant, a document, a space, an agent) or a role as the page shows it: its bidi
 * controls (embeddings, overrides, isolates and the invisible marks) written out, so that
 * "agent\u202Eexe.png" cannot read as another name. The stored name is unchanged.
 */
export const shownName = (name: string): string => reveal(name, /[\u200e\u200f\u202a-\u202e\u2066-\u2069]/g);

/**
 * Text someone wrote (a message, a description) as the page shows it: the controls that reorder
 * what follows them written out; the marks stay, which right-to-left writing needs.
 */
export const shownText = (text: string): string => reveal(text, /[\u202a-\u202e\u2066-\u2069]/g);
