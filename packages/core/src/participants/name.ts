/**
 * A participant's name as it is kept: in Unicode's composed form (NFC), in which names are typed
 * almost everywhere, so that an `@Name` in a message, read composed (nameFragments), finds it
 * whichever form it was given in (`Zoë` decomposed, from a macOS file name). The same text to the
 * eye, and to every comparison that normalises.
 */
export const participantName = (name: string): string => name.normalize('NFC');
