// Ends through `exitWith` with the code it is given once its terminal has hung up: a command that
// finished on its own (an editor that the closed window ended before convene's own SIGHUP was
// handled, exit 1) while the terminal it started on was already gone.
import { exitWith } from '../../src/lib/exit-codes';

const code = Number(process.argv[2]);
process.on('SIGHUP', () => setTimeout(() => exitWith(code), 50));
process.stdout.write('ready\n');
setInterval(() => {}, 1000);
