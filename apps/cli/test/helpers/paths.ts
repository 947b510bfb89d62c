import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const cliRoot = join(dirname(fileURLToPath(import.meta.url)), '../..');
export const repoRoot = join(cliRoot, '../..');
/** Where the tests' bundle lives (built once by the global setup). */
export const testBuild = join(cliRoot, '.test-build');
export const bundle = join(testBuild, 'dist/convene.mjs');
