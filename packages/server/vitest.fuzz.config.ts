import { conveneVitestConfig } from '../../vitest.shared';

/** `pnpm test:fuzz`: the schema-driven fuzz test, on PGlite and (with TEST_DATABASE_URL) PostgreSQL. */
export default conveneVitestConfig({ include: ['fuzz/**/*.fuzz.ts'] });
