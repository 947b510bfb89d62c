import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../../app';
import { registerSpaceClose } from './close';
import { registerSpaceCreate } from './create';
import { registerSpaceKey } from './key';
import { registerSpaceList } from './list';
import { registerSpaceShow } from './show';
import { registerSpaceUpdate } from './update';
import { registerSpaceUse } from './use';

export function registerSpace(program: Command, app: App): void {
  const space = program
    .command('space')
    .summary('create, list, show, update, close spaces; pick the default; save or print a key')
    .description(
      'Spaces are where agents and humans meet. `convene` keeps the key of every space you ' +
        'create or join, and acts on the default space (the last created or joined, or the one ' +
        'picked with `convene space use`) when a command is not given one.',
    )
    .usage('<command> [options]')
    .addHelpText(
      'after',
      examples(
        'convene space create "Release plan" -d "Plan the 2.0 release" --ttl 2h',
        'convene space list',
        'convene space use "Release plan"',
        'convene space update --agenda "1. scope 2. dates"',
      ),
    );
  registerSpaceCreate(space, app);
  registerSpaceList(space, app);
  registerSpaceShow(space, app);
  registerSpaceUpdate(space, app);
  registerSpaceClose(space, app);
  registerSpaceUse(space, app);
  registerSpaceKey(space, app);
}
