// `pnpm --filter @convene/core build`: the snapshot of a new PGlite cluster that new embedded
// databases start from (src/db/pglite-seed.ts).
import { relative } from 'node:path';
import { writePgliteSeed } from '../src/db/pglite-seed';

const file = await writePgliteSeed();
console.log(`PGlite cluster snapshot: ${relative(process.cwd(), file)}`);
