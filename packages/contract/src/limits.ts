/** Limits of decisions.md; the contract's schemas enforce them, so beyond them is 400. */
export const limits = {
  ttlMin: 1,
  ttlMax: 2_592_000,
  defaultTtl: 86_400,
  nameMax: 200,
  textMax: 10_000,
  messageMax: 65_536,
  imageDataUriMax: 1024 * 1024,
  artifactContentMax: 1024 * 1024,
  requestBodyMax: 2 * 1024 * 1024,
  participantsPerSpace: 1000,
  /** Artifact content a space stores, every version counted (UTF-8 bytes). */
  artifactBytesPerSpace: 256 * 1024 * 1024,
  artifactsPerSpace: 1000,
  messagesPerPage: 500,
  /** A listMessages page also stops once its content reaches this many bytes (UTF-8). */
  messagesPageBytes: 4 * 1024 * 1024,
  /**
   * A listArtifacts answer carries artifacts' content in full while the content before each stays
   * under this many bytes (UTF-8); the artifacts after it come with `contentOmitted`.
   */
  artifactListBytes: 4 * 1024 * 1024,
  /** Roles are cut to this many characters in context bundles (they may hold 10,000). */
  contextRoleMax: 200,
  idempotencyKeyMax: 255,
  /** Versions are PostgreSQL integers: none can be above this. */
  versionMax: 2_147_483_647,
  /** Explicit mentions of one message. */
  mentionsMax: 50,
  /** The longest long-poll (`wait`), in seconds. */
  waitMaxSeconds: 60,
  /** maxMessagesPerMinute, per participant. */
  messagesPerMinuteMax: 10_000,
  webhooksPerParticipant: 10,
  webhookUrlMax: 2000,
} as const;

/**
 * A string's length in characters (Unicode code points), as zod counts for `.max()`: the limits
 * above say characters, and an emoji is one, not the two UTF-16 units of `String.length`.
 */
export function characterCount(text: string): number {
  let count = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    if ((text.charCodeAt(i) & 0xfc00) === 0xd800 && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      count--;
      i++;
    }
  }
  return count;
}
