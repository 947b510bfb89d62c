// Runs a command on the terminal it is given, and says how it ended: `EXIT=<code>` on the
// terminal, as a shell's `$?` (128 + the signal's number for a command a signal ended), and
// `{code, signal}` as JSON in the file named first. It outlives what the command does not: a
// Ctrl-C (so that a command that ends by SIGINT still has its end shown) and its terminal
// closing (so that what a closed window did to the command is known).
const { spawn } = require('node:child_process');
const { writeFileSync } = require('node:fs');
const { constants } = require('node:os');

for (const signal of ['SIGINT', 'SIGHUP']) process.on(signal, () => {});
const [file, command, ...args] = process.argv.slice(2);
spawn(command, args, { stdio: 'inherit' }).on('exit', (code, signal) => {
  writeFileSync(file, JSON.stringify({ code, signal }));
  try {
    process.stdout.write(`EXIT=${signal ? 128 + constants.signals[signal] : code}\n`);
  } catch {
    // The terminal is gone.
  }
});
