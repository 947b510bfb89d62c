#!/usr/bin/env node
import { ExitCode, exitWith } from './lib/exit-codes';
import { describeFileProblem } from './lib/failure';
import { toJson } from './lib/output';
import { run } from './program';

/**
 * Failures of stdout that are no failure of the run: the terminal gone (closed, hung up: SIGHUP
 * follows, and ends the run as its handler does), and the stream ended after a first failure.
 */
const NOT_THE_RUNS = new Set(['EIO', 'ENXIO', 'ERR_STREAM_DESTROYED']);

/** Why stdout could not take what was written (a full disk), when it could not. */
let outputFailure: NodeJS.ErrnoException | undefined;

// A reader that stops early (`convene tail | head -1`) closes the pipe, and the next write fails
// with EPIPE: it has what it wanted, so end quietly and successfully, as git and gh do. Any other
// failure (a full disk under `convene messages > file`) fails the run once it ends: a script must
// not take a truncated file for the whole.
const onOutputError = (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') exitWith(ExitCode.ok);
  if (!NOT_THE_RUNS.has(error.code ?? '')) outputFailure ??= error;
};
process.stdout.on('error', onOutputError);
// A closed stderr, or the terminal gone, only loses what was left to say there: whatever the
// command was doing (keeping an edit's text, releasing its lock) goes on to its end.
process.stderr.on('error', () => {});

let code = await run(process.argv);
// Let stdout and stderr drain (they are asynchronous on pipes), then end even if an idle
// keep-alive connection would hold the process open.
process.stdout.write('', (error?: NodeJS.ErrnoException | null) =>
  process.stderr.write('', () => {
    // A write to a file fails there, and may never say so as an event.
    if (error) onOutputError(error);
    if (outputFailure && code === ExitCode.ok) {
      const said = `cannot write the output: ${describeFileProblem(outputFailure)}`;
      process.stderr.write(
        process.argv.includes('--json')
          ? `${toJson({ error: said, exitCode: ExitCode.error })}\n`
          : `✗ ${said}\n`,
      );
      code = ExitCode.error;
    }
    exitWith(code);
  }),
);
