/** The exit codes scripts can rely on (the public interface, with the command names). */
export const ExitCode = {
  ok: 0,
  error: 1,
  usage: 2,
  /** A credential is missing or no longer works: log in, or join the space again. */
  auth: 4,
  notFound: 5,
  /** Locked by someone else, or a state conflict (a closed space, a stale baseVersion). */
  conflict: 6,
  /** Ctrl-C (128 + SIGINT), as shells report it. */
  interrupted: 130,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];
