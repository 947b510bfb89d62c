import type { Command } from '@commander-js/extra-typings';
import { AuthenticationError, ConnectionError, ConveneError } from '@convene/sdk';
import { type App, examples } from '../../app';
import { timeLeft } from '../../lib/duration';
import { isSpaceClosed, spaceOver } from '../../lib/errors';
import { unreachableHint } from '../../lib/failure';
import { mapLimit } from '../../lib/map-limit';
import { suggest } from '../../lib/suggest';

export function registerSpaceList(space: Command, app: App): void {
  space
    .command('list')
    .alias('ls')
    .summary('the spaces you hold keys for on this server')
    .description(
      'List the spaces whose keys convene keeps for this server, with their state as the server ' +
        'sees it now. The default space is marked with *.',
    )
    .addHelpText('after', examples('convene space list', 'convene space list --json | jq -r ".[].spaceId"'))
    .action(async (_options, command) => {
      const ctx = app.context(command);
      const host = ctx.host();
      const saved = Object.values(host.spaces).sort((a, b) => a.savedAt.localeCompare(b.savedAt));
      const hub = ctx.hub();
      // Spaces whose key the server no longer takes: its participant was removed, or left elsewhere.
      const refused = new Set<string>();
      // Spaces the server was not there to ask about: their state is unknown, not a problem of theirs.
      const unasked = new Set<string>();
      const rows = await mapLimit(saved, 8, async (s) => {
        try {
          const view = await hub.space(s.spaceId, s.key).get();
          return { ...s, view, closed: undefined, problem: undefined };
        } catch (error) {
          if (!(error instanceof ConveneError)) throw error;
          // Closed or expired is a state, not a problem: said as `send` says it, by the server's code.
          if (isSpaceClosed(error))
            return { ...s, view: undefined, closed: spaceOver(error), problem: undefined };
          if (error instanceof AuthenticationError) refused.add(s.spaceId);
          if (error instanceof ConnectionError) unasked.add(s.spaceId);
          return { ...s, view: undefined, closed: undefined, problem: error.message };
        }
      });
      ctx.refreshSpaceNames(rows.flatMap((r) => (r.view ? [r.view] : [])));
      const json = rows.map((r) => ({
        spaceId: r.spaceId,
        name: r.view?.name ?? r.name,
        role: r.role,
        participantId: r.participantId,
        isDefault: r.spaceId === host.defaultSpace,
        state: r.view?.state ?? r.closed ?? 'unavailable',
        ttlRemaining: r.view?.ttlRemaining,
        privacy: r.view?.privacy,
        problem: r.problem,
      }));
      const { out } = ctx;
      out.result(json, {
        quiet: () => json.map((r) => r.spaceId).join('\n') || undefined,
        human: () =>
          out.table(
            json,
            [
              { header: '', value: (r) => (r.isDefault ? '*' : ' ') },
              { header: 'name', value: (r) => r.name, style: (t) => out.c.bold(t) },
              { header: 'space', value: (r) => r.spaceId, id: true },
              { header: 'role', value: (r) => r.role },
              {
                header: 'state',
                value: (r) =>
                  r.state === 'open' && r.ttlRemaining !== undefined
                    ? `open, ${timeLeft(r.ttlRemaining)} left`
                    : refused.has(r.spaceId)
                      ? `key refused (removed, or left): \`${suggest(ctx, 'leave', { space: host.spaces[r.spaceId], always: true })}\` forgets it`
                      : unasked.has(r.spaceId)
                        ? 'not checked: no answer'
                        : r.state === 'unavailable'
                          ? `unavailable: ${r.problem}`
                          : r.state,
                style: (t, r) => (r.state === 'open' ? out.c.green(t) : out.c.dim(t)),
                // It may hold the command line that forgets the space.
                whole: true,
              },
            ],
            // The rows are the keys this configuration keeps: with none, no server was asked.
            `No spaces saved for ${ctx.url}: \`convene space create NAME\` or \`convene join LINK\`.`,
          ),
      });
      // The same server under another name (`127.0.0.1` for `localhost`), or another server (an
      // earlier `serve --port`): its keys are there.
      const elsewhere = saved.length === 0 ? ctx.keysElsewhereHint() : undefined;
      if (elsewhere) out.hint(elsewhere);
      // Said once, not on every row: the rows are the saved keys, the server is what is missing.
      if (unasked.size > 0 && !out.mode.json) {
        out.warn(
          `${ctx.url} does not answer: the states are not checked. ${unreachableHint(ctx.url, ctx.urlIsExplicit, { keysHere: true })}`,
        );
      }
    });
}
