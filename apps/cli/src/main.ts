#!/usr/bin/env node
import { run } from './program';

// A reader that stops early (`convene tail | head -1`) closes the pipe, and the next write fails
// with EPIPE: it has what it wanted, so end quietly and successfully, as git and gh do. A closed
// stderr only loses what was left to say there; the command ends with its own code.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});
process.stderr.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
});

const code = await run(process.argv);
// Let stdout and stderr drain (they are asynchronous on pipes), then end even if an idle
// keep-alive connection would hold the process open.
process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
