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
  artifactsPerSpace: 1000,
  messagesPerPage: 500,
  idempotencyKeyMax: 255,
} as const;
