import { defineConfig } from 'tsdown';

/**
 * The published build: ESM and CommonJS with their declarations, for every runtime with fetch
 * (`platform: 'neutral'`: no Node built-ins may be pulled in). eventsource-parser stays a
 * dependency; nothing else is bundled.
 */
export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  platform: 'neutral',
  target: 'es2022',
  tsconfig: 'tsconfig.build.json',
  clean: true,
  sourcemap: false,
});
