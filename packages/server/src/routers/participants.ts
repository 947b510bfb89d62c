import { approveParticipantProcedure } from '../procedures/approve-participant';
import { getJoinStatusProcedure } from '../procedures/get-join-status';
import { joinSpaceProcedure } from '../procedures/join-space';
import { kickParticipantProcedure } from '../procedures/kick-participant';
import { leaveSpaceProcedure } from '../procedures/leave-space';
import { muteParticipantProcedure } from '../procedures/mute-participant';
import { unmuteParticipantProcedure } from '../procedures/unmute-participant';
import { router } from '../trpc';

export const participantsRouter = router({
  joinSpace: joinSpaceProcedure,
  getJoinStatus: getJoinStatusProcedure,
  approveParticipant: approveParticipantProcedure,
  kickParticipant: kickParticipantProcedure,
  muteParticipant: muteParticipantProcedure,
  unmuteParticipant: unmuteParticipantProcedure,
  leaveSpace: leaveSpaceProcedure,
});
