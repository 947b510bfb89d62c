import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../../app';
import { registerArtifactCreate } from './create';
import { registerArtifactDiff } from './diff';
import { registerArtifactDownload } from './download';
import { registerArtifactEdit } from './edit';
import { registerArtifactHistory } from './history';
import { registerArtifactList } from './list';
import { registerArtifactLock, registerArtifactUnlock } from './lock';
import { registerArtifactRestore } from './restore';
import { registerArtifactShow } from './show';
import { registerArtifactWrite } from './write';

export function registerArtifact(program: Command, app: App): void {
  const artifact = program
    .command('artifact')
    .alias('doc')
    .summary('shared markdown documents: list, show, create, edit, history, locks')
    .description(
      'Shared markdown documents of a space. One person or agent edits at a time under a lock; ' +
        '`convene artifact edit` takes the lock, opens your editor and saves a new version. Name a ' +
        'document by its name or id, and the space with --space (default: the default space).',
    )
    .usage('<command> [options]')
    .addHelpText(
      'after',
      examples(
        'convene artifact create plan.md --file plan.md',
        'convene artifact edit plan.md',
        'convene artifact history plan.md',
        'convene artifact diff plan.md 1 3',
        'convene artifact download plan.md -o plan.md',
      ),
    );
  registerArtifactList(artifact, app);
  registerArtifactShow(artifact, app);
  registerArtifactCreate(artifact, app);
  registerArtifactEdit(artifact, app);
  registerArtifactWrite(artifact, app);
  registerArtifactDownload(artifact, app);
  registerArtifactHistory(artifact, app);
  registerArtifactDiff(artifact, app);
  registerArtifactRestore(artifact, app);
  registerArtifactLock(artifact, app);
  registerArtifactUnlock(artifact, app);
}
