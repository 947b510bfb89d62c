import { type Command, Help, Option } from '@commander-js/extra-typings';
import { type App, examples } from '../app';
import type { Context } from '../lib/context';
import { CliError, Reported, UsageError } from '../lib/errors';
import { ExitCode, exitWithCode } from '../lib/exit-codes';
import { hostKey } from '../lib/store';

/**
 * `convene serve`: the server itself, what `pnpm start` runs. The one command that loads the
 * server (lazily: every other command starts without it). Flags override the environment
 * variables the server reads (PORT, HOST, DATABASE_URL, DATA_DIR, …).
 */
export function registerServe(program: Command, app: App): void {
  program
    .command('serve')
    .summary('start the Convene server')
    .description(
      'Start the Convene server in this terminal. It prints `Convene listening on <url>` once it accepts ' +
        'requests and stops cleanly on Ctrl-C or SIGTERM (exit 0), and on SIGHUP, when its ' +
        'terminal closes (exit 129). Without a database URL, data is kept in an ' +
        'embedded database (PGlite) under --data-dir. Every setting can also come from the ' +
        'environment (listed below; a flag wins).',
    )
    .addOption(new Option('-p, --port <port>', 'port to listen on (env PORT, default 3000)'))
    .addOption(new Option('--host <host>', 'address to listen on (env HOST, default 127.0.0.1)'))
    .addOption(
      new Option(
        '--database-url <url>',
        'postgres:// or postgresql:// URL, or memory:// (env DATABASE_URL; default embedded)',
      ),
    )
    .addOption(new Option('--data-dir <dir>', 'embedded database directory (env DATA_DIR, default ./.data)'))
    .addOption(
      new Option(
        '--log-format <format>',
        'json (also --json), or text for a person (env LOG_FORMAT; default text on a terminal)',
      ).choices(['json', 'text']),
    )
    .configureHelp({
      // The program's help settings (global options shown, but --version), less --url: that option
      // names the server the other commands talk to, and serve is that server (--port and --host
      // say where); less --json and --quiet, which are of a command's output: a server's is its
      // log (--log-format, which --json is too, and LOG_LEVEL).
      ...program.configureHelp(),
      visibleGlobalOptions(cmd) {
        const programs = program.configureHelp().visibleGlobalOptions ?? Help.prototype.visibleGlobalOptions;
        return programs
          .call(this, cmd)
          .filter((option) => !['--url', '--json', '--quiet'].includes(option.long ?? ''));
      },
    })
    .addHelpText(
      'after',
      `${examples(
        'convene serve',
        'convene serve --port 8080 --data-dir ~/convene-data',
        'convene serve --database-url postgres://localhost/convene',
      )}${SERVE_ENVIRONMENT}`,
    )
    .action(async (options, command) => {
      const ctx = app.context(command);
      // The global --url names the server the other commands talk to; serve is that server, and
      // starting it while silently ignoring where you said it was would mislead.
      if ((command.optsWithGlobals() as { url?: string }).url !== undefined) {
        throw new UsageError(
          'serve takes no --url: it is the server, not a client of one',
          'Place it with --port and --host (PUBLIC_URL sets the URL it hands out). See `convene serve --help`.',
        );
      }
      const globals = command.optsWithGlobals() as { json?: boolean; quiet?: boolean };
      // A server's output is its log: --json asks for it as JSON lines, as --log-format json does;
      // --quiet has no essential value to print, and LOG_LEVEL says how much of the log to keep.
      if (globals.quiet) {
        throw new UsageError(
          'serve takes no --quiet: a server prints its log, not a value',
          'LOG_LEVEL=warn leaves out its info lines; LOG_LEVEL=silent every line, the readiness line too. See `convene serve --help`.',
        );
      }
      if (globals.json && options.logFormat === 'text')
        throw new UsageError(
          '--json and --log-format text ask for two formats of the log',
          'Pass one: --json is --log-format json.',
        );
      const { loadConfig, logFormatOf, logsAsJson, serve, startFailure, startFailureLine } = await import(
        '@convene/server'
      );
      const overrides: Record<string, string> = {};
      const logFormat = globals.json ? 'json' : options.logFormat;
      if (logFormat !== undefined) overrides.LOG_FORMAT = logFormat;
      // With JSON logs, a failure to start is a JSON line of the log too (level 60, fatal).
      let json = logsAsJson(logFormatOf({ ...process.env, ...overrides }));
      const failure = (message: string, hint: string, exitCode: ExitCode, cause?: unknown): CliError =>
        json
          ? new Reported(startFailureLine(true, message, { hint, exitCode }), message, exitCode)
          : new CliError(message, { hint, exitCode, cause });
      if (options.port !== undefined) {
        if (!/^\d+$/.test(options.port) || Number(options.port) > 65535) {
          throw failure(
            `--port must be a number from 0 to 65535, not "${options.port}"`,
            'See `convene serve --help`.',
            ExitCode.usage,
          );
        }
        overrides.PORT = options.port;
      }
      if (options.host !== undefined) overrides.HOST = options.host;
      if (options.databaseUrl !== undefined) overrides.DATABASE_URL = options.databaseUrl;
      if (options.dataDir !== undefined) overrides.DATA_DIR = options.dataDir;
      const env = { ...process.env, ...overrides };
      let config: ReturnType<typeof loadConfig>;
      try {
        config = loadConfig(env);
      } catch (error) {
        throw failure((error as Error).message, 'See `convene serve --help`.', ExitCode.usage);
      }
      json = logsAsJson(config.logFormat);
      let publicUrl = config.publicUrl;
      try {
        // The URL it hands out as it runs: with --port 0, the port the system chose.
        ({ publicUrl } = (
          await serve(config, {
            onStoppable: () => {
              ctx.serverOwnsSignals = true;
            },
            exit: exitWithCode,
          })
        ).config);
      } catch (error) {
        // A setting refused only when tried (a HOST that is no address here) exits 2, as above.
        const { message, exitCode } = startFailure(error);
        throw failure(
          message,
          /^invalid configuration: HOST: /.test(message)
            ? 'Listen on an address of this machine with --host or HOST (0.0.0.0: every interface).'
            : /EADDRINUSE/.test(message)
              ? 'Another process listens on that port: choose another with --port or PORT.'
              : 'See `convene serve --help` for the settings.',
          exitCode === 2 ? ExitCode.usage : ExitCode.error,
          error,
        );
      }
      // A server away from where the other commands look (another port, a PUBLIC_URL): say how
      // to point them at it, before their first command fails against the default.
      if (!json) {
        const clientUrl = clientUrlOf(ctx);
        if (clientUrl !== undefined && clientUrl !== hostKey(publicUrl))
          ctx.out.hint(
            `convene commands talk to ${clientUrl}: in other terminals, export CONVENE_URL=${publicUrl} (or pass --url ${publicUrl}).`,
          );
      }
      // Runs until a signal: the server's own handlers close it and end the process.
      await new Promise<never>(() => {});
    });
}

/**
 * The environment `serve` reads, in its help: the README that explains each further is in the
 * installed package, which a global install leaves where `npm root -g` says.
 */
const SERVE_ENVIRONMENT = `
Environment (a flag wins over its variable; an empty value is unset):
  PORT, HOST            where it listens (3000, 127.0.0.1)
  DATABASE_URL          postgres:// or postgresql:// URL, or memory://
                        (unset: PGlite in DATA_DIR, ./.data)
  DATA_DIR, PGPASSWORD  the embedded database's directory; the PostgreSQL
                        password when DATABASE_URL names none
  PUBLIC_URL            the base of the links it hands out
  LOG_FORMAT            json, or text (the default on a terminal)
  LOG_LEVEL             info; debug, warn, error, …; silent (not even the
                        readiness line)
  SECRET                the server secret (generated once and kept)
  PREVIOUS_SECRET, PREVIOUS_DATABASE_PASSWORD
                        the ones replaced, after changing either
  CORS_ORIGINS          origins whose pages may call the API (a,b or *)
  TRUST_PROXY           how many proxies of yours stand before it
  RATE_LIMIT_MAX, RATE_LIMIT_WINDOW_S, RATE_LIMIT_PAGES_MAX
                        requests a window per client (300 per 60 s);
                        the web pages' own count
  SHUTDOWN_DRAIN_S      how long SIGTERM keeps it serving, health at 503
  LOCK_TTL_S, LINK_TTL_S, SESSION_TTL_S, USER_TOKEN_TTL_S
                        lifetimes of a lock, a login link, a dashboard
                        session and a usr_ token, in seconds
  SPACE_RETENTION_S     how long a closed or expired space is kept
  OIDC_ISSUER, OIDC_JWKS_URL, OIDC_AUDIENCE
                        also accept the JWTs of that OpenID Connect issuer
  WEBHOOK_ALLOW_PRIVATE, WEBHOOK_ALLOW_NETWORKS
                        webhooks to loopback and private addresses (true),
                        or to these addresses and CIDR ranges
  WEBHOOK_RETRY_DELAYS_S, WEBHOOK_TIMEOUT_S
                        the waits between a delivery's attempts; how long a
                        receiver has to answer (10)
Each is explained in the README installed with convene:
$(npm root -g)/@convene/cli/README.md after a global install (npm install -g),
else node_modules/@convene/cli/README.md where it was installed.
`;

/** The server the other commands talk to (CONVENE_URL, the saved one, localhost:3000); none if unreadable. */
function clientUrlOf(ctx: Context): string | undefined {
  try {
    return ctx.url;
  } catch {
    return undefined;
  }
}
