import { createArtifactProcedure } from '../procedures/create-artifact';
import { getArtifactProcedure } from '../procedures/get-artifact';
import { getArtifactVersionProcedure } from '../procedures/get-artifact-version';
import { heartbeatArtifactLockProcedure } from '../procedures/heartbeat-artifact-lock';
import { listArtifactVersionsProcedure } from '../procedures/list-artifact-versions';
import { listArtifactsProcedure } from '../procedures/list-artifacts';
import { lockArtifactProcedure } from '../procedures/lock-artifact';
import { restoreArtifactVersionProcedure } from '../procedures/restore-artifact-version';
import { unlockArtifactProcedure } from '../procedures/unlock-artifact';
import { writeArtifactProcedure } from '../procedures/write-artifact';
import { router } from '../trpc';

/** Artifacts, their locks and their history; download and diff are raw routes (routes/artifact-files.ts). */
export const artifactsRouter = router({
  createArtifact: createArtifactProcedure,
  listArtifacts: listArtifactsProcedure,
  getArtifact: getArtifactProcedure,
  writeArtifact: writeArtifactProcedure,
  lockArtifact: lockArtifactProcedure,
  heartbeatArtifactLock: heartbeatArtifactLockProcedure,
  unlockArtifact: unlockArtifactProcedure,
  listArtifactVersions: listArtifactVersionsProcedure,
  getArtifactVersion: getArtifactVersionProcedure,
  restoreArtifactVersion: restoreArtifactVersionProcedure,
});
