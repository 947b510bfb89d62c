// Use cases of this domain; each file exports one.
export {};
