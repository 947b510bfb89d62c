import { conveneVitestConfig } from '../../vitest.shared';

/**
 * `pnpm test:fuzz`: the schema-driven fuzz test, on PGlite and (with TEST_DATABASE_URL) PostgreSQL.
 * The REST fuzz of both databases first, side by side (56 and 47 s in CI), then the MCP ones (28
 * and 19 s): both REST files had run after an MCP one, the second alone at the end.
 */
export default conveneVitestConfig({ include: ['fuzz/**/*.fuzz.ts'], slow: ['rest.fuzz.ts'] });
