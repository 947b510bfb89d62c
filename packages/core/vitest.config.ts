import { conveneVitestConfig } from '../../vitest.shared';

// Every file opens its own databases, so the files of a worker share its modules (and PGlite's
// compiled WebAssembly): 106 s to 72 s for the suite on both databases. Passes with its files
// shuffled (`--sequence.shuffle.files`).
export default conveneVitestConfig({ isolate: false });
