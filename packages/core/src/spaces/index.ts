export * from './close-space';
export {
  isAssembled,
  jsonPartsWithParticipants,
  jsonWithParticipants,
  ParticipantsCache,
  participantsForReply,
  readContext,
} from './context-cache';
export * from './create-space';
export * from './get-space';
export * from './purge-spaces';
export * from './update-space';
export * from './views';
