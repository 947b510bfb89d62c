// Use cases of this domain; each file exports one.
export * from './approve-participant';
export * from './create-invitation';
export * from './get-join-status';
export * from './join-space';
export * from './kick-participant';
export * from './leave-space';
export * from './mute-participant';
export * from './record-presence';
export * from './unmute-participant';
