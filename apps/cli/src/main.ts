#!/usr/bin/env node
import { run } from './program';

const code = await run(process.argv);
// Let stdout and stderr drain (they are asynchronous on pipes), then end even if an idle
// keep-alive connection would hold the process open.
process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
