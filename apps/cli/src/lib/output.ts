import * as clack from '@clack/prompts';
import pc from 'picocolors';

type Colors = ReturnType<typeof pc.createColors>;

/** What the environment allows: decided once per run from the streams, the flags and the variables. */
export interface OutputMode {
  /** `--json`: machine output on stdout, nothing else there. */
  json: boolean;
  /** `--quiet`: only the essential value (an id), no status lines. */
  quiet: boolean;
  /** Colours on stdout and stderr. */
  color: boolean;
  /** Spinners on stderr. */
  spin: boolean;
  /** Prompts for what is missing (stdin and stdout are a terminal, no CI or agent). */
  interactive: boolean;
}

/**
 * Plain text unless a human is at a terminal: not when stdout is not a TTY, nor with NO_COLOR,
 * CI or AI_AGENT set (FORCE_COLOR forces colours, for people who pipe into `less -R`).
 */
export function detectMode(
  flags: { json?: boolean; quiet?: boolean; color?: boolean },
  env: NodeJS.ProcessEnv = process.env,
  streams: { stdin: { isTTY?: boolean }; stdout: { isTTY?: boolean }; stderr: { isTTY?: boolean } } = process,
): OutputMode {
  const set = (name: string) => env[name] !== undefined && env[name] !== '' && env[name] !== '0';
  const automated = set('CI') || set('AI_AGENT');
  const plain = automated || set('NO_COLOR') || env.TERM === 'dumb' || flags.color === false;
  const json = flags.json === true;
  return {
    json,
    quiet: flags.quiet === true,
    color: set('FORCE_COLOR') ? flags.color !== false : Boolean(streams.stdout.isTTY) && !plain,
    spin: Boolean(streams.stderr.isTTY) && !plain && !json && flags.quiet !== true,
    interactive: Boolean(streams.stdin.isTTY) && Boolean(streams.stdout.isTTY) && !automated,
  };
}

export interface Column<Row> {
  header: string;
  value: (row: Row) => string;
  style?: (text: string, row: Row) => string;
}

export interface Spinner {
  message(text: string): void;
  stop(text?: string): void;
  fail(text?: string): void;
}

/** Every byte the CLI prints goes through here. Data on stdout; status, hints and errors on stderr. */
export class Output {
  readonly c: Colors;

  constructor(
    readonly mode: OutputMode,
    private readonly stdout: NodeJS.WritableStream = process.stdout,
    private readonly stderr: NodeJS.WritableStream = process.stderr,
  ) {
    this.c = pc.createColors(mode.color);
  }

  /** A line of data on stdout. */
  line(text = ''): void {
    this.stdout.write(`${text}\n`);
  }

  /** Raw data on stdout, as it is (artifact content, a diff). */
  raw(text: string): void {
    this.stdout.write(text);
  }

  /** A value in `--json` mode: the API's own field names, indented for people and parsers alike. */
  json(value: unknown): void {
    this.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  /** One NDJSON record (`tail --json`). */
  jsonLine(value: unknown): void {
    this.stdout.write(`${JSON.stringify(value)}\n`);
  }

  /**
   * The one way a command reports its result: JSON with `--json`, the essential value with
   * `--quiet`, else the human rendering.
   */
  result(value: unknown, render: { human: () => void; quiet?: () => string | undefined }): void {
    if (this.mode.json) this.json(value);
    else if (this.mode.quiet) {
      const essential = render.quiet?.();
      if (essential !== undefined) this.line(essential);
    } else render.human();
  }

  /** A status line on stderr (`✓ Created …`); silent with --json or --quiet. */
  success(text: string): void {
    if (this.mode.json || this.mode.quiet) return;
    this.stderr.write(`${this.c.green('✓')} ${text}\n`);
  }

  /** Progress or context on stderr; silent with --json or --quiet. */
  info(text: string): void {
    if (this.mode.json || this.mode.quiet) return;
    this.stderr.write(`${text}\n`);
  }

  /** What to try next, on stderr; silent with --json or --quiet. */
  hint(text: string): void {
    if (this.mode.json || this.mode.quiet) return;
    this.stderr.write(`${this.c.dim(text)}\n`);
  }

  /** A warning on stderr, always shown (but never on stdout). */
  warn(text: string): void {
    this.stderr.write(`${this.c.yellow('!')} ${text}\n`);
  }

  /** An error on stderr. */
  error(message: string, hint?: string): void {
    this.stderr.write(`${this.c.red('✗')} ${message}\n`);
    if (hint) this.stderr.write(`${this.c.dim(hint)}\n`);
  }

  /** Label/value pairs, labels aligned. Empty values are left out. */
  fields(pairs: [label: string, value: string | undefined][]): void {
    const shown = pairs.filter((p): p is [string, string] => p[1] !== undefined && p[1] !== '');
    const width = Math.max(0, ...shown.map(([label]) => label.length));
    for (const [label, value] of shown) {
      const [first, ...rest] = value.split('\n');
      this.line(`${this.c.dim(label.padEnd(width))}  ${first}`);
      for (const more of rest) this.line(`${' '.repeat(width)}  ${more}`);
    }
  }

  /** Rows in aligned columns under a header; `empty` when there are none. */
  table<Row>(rows: Row[], columns: Column<Row>[], empty: string): void {
    if (rows.length === 0) {
      this.info(this.c.dim(empty));
      return;
    }
    const cells = rows.map((row) => columns.map((column) => column.value(row)));
    const widths = columns.map((column, i) =>
      Math.max(column.header.length, ...cells.map((row) => visibleLength(row[i]!))),
    );
    const pad = (text: string, i: number) =>
      i === columns.length - 1 ? text : text + ' '.repeat(widths[i]! - visibleLength(text));
    this.line(columns.map((column, i) => this.c.bold(pad(column.header.toUpperCase(), i))).join('  '));
    rows.forEach((row, r) => {
      this.line(
        columns
          .map((column, i) => {
            const text = pad(cells[r]![i]!, i);
            return column.style ? column.style(text, row) : text;
          })
          .join('  ')
          .trimEnd(),
      );
    });
  }

  /**
   * A spinner on stderr while something takes time; without a terminal, each message once (so a
   * log still shows what the process waits for), and nothing with --json or --quiet.
   */
  spinner(text: string): Spinner {
    if (!this.mode.spin) {
      this.info(`${text}…`);
      let shown = text;
      return {
        message: (next) => {
          if (next === shown) return;
          shown = next;
          this.info(`${next}…`);
        },
        stop: (done) => done && this.success(done),
        fail: (failed) => failed && this.info(failed),
      };
    }
    const s = clack.spinner({ output: this.stderr as NodeJS.WriteStream, withGuide: false });
    s.start(text);
    return {
      message: (next) => s.message(next),
      stop: (done) => s.stop(done ?? text),
      fail: (failed) => s.error(failed ?? text),
    };
  }
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escape sequences start with ESC.
const ANSI = /\u001b\[[0-9;]*m/g;
const visibleLength = (text: string) => text.replace(ANSI, '').length;
