// `pnpm convene …` runs the CLI from source. pnpm runs root scripts in the repository root;
// work in the directory the command was typed in, so relative paths (--file, -o) mean what they say.
if (process.env.INIT_CWD) process.chdir(process.env.INIT_CWD);
await import('./main');

export {};
