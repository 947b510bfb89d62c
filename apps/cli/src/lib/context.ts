import { randomUUID } from 'node:crypto';
import {
  AuthenticationError,
  ConnectionError,
  Convene,
  type ConveneError,
  type Logger,
  NotFoundError,
  type SpaceView,
} from '@convene/sdk';
import { Changes } from './changes';
import { commandLine, type LineParts } from './command-line';
import { CliError, keyNoLongerTaken, keyNotKept, NoSpaceSavedError, UsageError } from './errors';
import { ExitCode } from './exit-codes';
import { mapLimit } from './map-limit';
import { conveneFetch, isNotConvene } from './not-convene';
import { count, detectMode, inline, Output } from './output';
import { shellWord, type Value, verbatim } from './quote';
import { closest, find, sameName } from './resolve';
import { CredentialStore, type HostEntry, hostKey, type StoredSpace, type StoreFile } from './store';

export const DEFAULT_URL = 'http://localhost:3000';

/** Where Context.saveSpace saves a key, and what else it changes in the same write. */
export interface SaveOptions {
  url?: string | undefined;
  alongside?: ((file: StoreFile, host: HostEntry) => void) | undefined;
}

/**
 * The longest Retry-After a command waits out before trying again (the SDK's `maxRetryAfterMs`):
 * the end of a rate limit's window. A longer refusal, a space's message budget or the rest of a
 * window, is not waited for: the command fails at once, exit 6, saying when to try again, where
 * the SDK alone would wait up to a minute, twice, and seem to hang.
 */
export const WAIT_MAX_MS = 5_000;

/**
 * The SDK's line for a retry after a 429 (`sendMessage: POST … answered 429 rate limit exceeded;
 * retrying in 3120 ms (retry 1 of 2)`), said in short: `rate limit exceeded: trying again in 4 s`.
 * Undefined for any other line.
 */
export function rateLimitWait(line: string): string | undefined {
  const said = / answered 429 (.*); retrying in (\d+) ms \(retry \d+ of \d+\)$/.exec(line);
  return said ? `${said[1]}: trying again in ${Math.ceil(Number(said[2]) / 1000)} s` : undefined;
}

/** The options every command takes (declared once on the program). */
export interface GlobalOptions {
  url?: string;
  json?: boolean;
  quiet?: boolean;
  color?: boolean;
}

/** What is being used when a call fails: decides the hint (`convene login`, `convene join …`). */
export type Using =
  | { kind: 'space'; space: StoredSpace }
  | { kind: 'session' }
  /** An invitation key, of the space `spaceId` when the command knows it. */
  | { kind: 'invitation'; spaceId?: string }
  | { kind: 'server' }
  | { kind: 'none' };

/**
 * Everything a command needs, built once per run: the output mode, the server, the credential
 * store, SDK clients, and the interrupt signal (Ctrl-C).
 */
export class Context {
  readonly out: Output;
  readonly store: CredentialStore;
  /** Aborted by the first Ctrl-C (SIGINT), SIGTERM or SIGHUP; its reason's message names the signal. */
  readonly signal: AbortSignal;
  /** Set by commands that finish cleanly on Ctrl-C (tail, edit, waits); others exit 130 at once. */
  handlesInterrupt = false;
  /**
   * Set while an editor is open: a terminal's Ctrl-C reaches the editor too, and the editor decides
   * (as git does). An editor that carries on keeps the edit; one stopped by it ends the edit.
   */
  editorOwnsInterrupt = false;
  /** Set by `serve` once the server is up: it stops itself on SIGINT, SIGTERM and SIGHUP. */
  serverOwnsSignals = false;
  /** The changes sent whose outcome is not known yet: what a signal that ends the run says may be done. */
  readonly changes = new Changes();
  using: Using = { kind: 'none' };
  /**
   * The space the command acts on, once found, and whether the command line named it: the
   * command lines its hints suggest act on it too (`suggest`).
   */
  chosenSpace: { space: StoredSpace; named: boolean } | undefined;
  /**
   * The document the command acts on, once found: errors name it, and hints too (`artifact
   * history "plan.md"`), as `named` (its id when another document shares its name).
   */
  artifact: { name: string; named: Value } | undefined;
  /** The command being run (`convene space create`), for hints that point at its help. */
  commandName: string | undefined;
  private readonly explicitUrl: string | undefined;
  private requested: string | undefined;

  constructor(
    readonly options: GlobalOptions,
    signal: AbortSignal,
    readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.out = new Output(detectMode(options, env));
    this.store = new CredentialStore();
    this.store.warnIfOpen = (text) => this.out.warn(text);
    this.store.warnIfSetAside = (text) => this.out.warn(text);
    this.signal = signal;
    this.explicitUrl = options.url ?? (env.CONVENE_URL || undefined);
  }

  /** --url, else CONVENE_URL, else the server of the default space (makeDefault), else localhost:3000. */
  get url(): string {
    const fromEnv = this.options.url === undefined && this.explicitUrl !== undefined;
    return normaliseUrl(
      this.explicitUrl ?? this.store.read().url ?? DEFAULT_URL,
      fromEnv ? 'CONVENE_URL' : '--url',
    );
  }

  /**
   * Where the SDK's warnings go (a deprecated API version and its sunset date, a heartbeat or an
   * unlock that failed): warnings of ours on stderr, neutralised as any text, since they quote the
   * server's headers and errors. Its info and debug lines are dropped, as its default level drops
   * them, but for a wait after a 429, said in short (`rate limit exceeded: trying again in 3 s`):
   * a pause a person would otherwise take for a hang.
   */
  private readonly sdkLogger: Logger = {
    debug: () => {},
    info: (message) => this.sayWait(message),
    // A wait of 5 s or more is a warning of the SDK's: said as the shorter ones are.
    warn: (message) => this.sayWait(message) || this.out.warn(message),
    error: (message) => this.out.warn(message),
  };

  /**
   * Says an SDK line that is a wait after a 429, in short; false for any other line. With --json,
   * as a `{"warning": …}` line, as a lost connection is: a script reading stderr can tell a wait
   * from a hang (or a quiet space) too.
   */
  private sayWait(line: string): boolean {
    const wait = rateLimitWait(line);
    if (wait && this.out.mode.json) this.out.warn(wait);
    else if (wait) this.out.info(wait);
    return wait !== undefined;
  }

  /** Whether the server was named on this command line or in the environment. */
  get urlIsExplicit(): boolean {
    return this.explicitUrl !== undefined;
  }

  host(): HostEntry {
    return this.store.host(this.url);
  }

  /**
   * Whether keys of spaces on this server are saved here: what a server that does not answer
   * would lose if started again on other data. False when the credential file cannot be read.
   */
  keysHere(url: string = this.url): boolean {
    try {
      return Object.keys(this.store.host(url).spaces).length > 0;
    } catch {
      return false;
    }
  }

  /** The `usr_` token sent with creates and joins: CONVENE_TOKEN, else the one `convene login` saved. */
  userToken(): string | undefined {
    return this.env.CONVENE_TOKEN || this.host().userToken;
  }

  /**
   * Whether the server accepts a `usr_` token (unknown, revoked and expired ones it refuses).
   * Key recovery is the one route where a token identifies its human: for a space nobody holds,
   * a token that works is answered 404 (no key there), one that does not 401.
   */
  async userTokenWorks(token: string, url: string = this.url): Promise<boolean> {
    return (await this.tokenRefusal(token, url)) === undefined;
  }

  /** The server's refusal of a `usr_` token (see userTokenWorks), with its code; undefined if it works. */
  async tokenRefusal(token: string, url: string = this.url): Promise<AuthenticationError | undefined> {
    try {
      await this.hub(url).withOptions({ userToken: token }).spaces.recoverKey(randomUUID());
      return undefined;
    } catch (error) {
      if (error instanceof NotFoundError) return undefined;
      if (error instanceof AuthenticationError) return error;
      throw error;
    }
  }

  /**
   * After a create or a join that sent a `usr_` token: the server ignores one it does not take (a
   * revoked or mistyped token), so what was made would silently stay off the dashboard; say so.
   * A check that cannot be made (a network failure) says nothing.
   */
  async warnIfTokenIgnored(what: 'this space' | 'this membership', url: string = this.url): Promise<void> {
    const token = this.userToken();
    if (!token || (await this.userTokenWorks(token, url).catch(() => true))) return;
    const fromEnv = Boolean(this.env.CONVENE_TOKEN);
    this.out.warn(
      `${url} does not accept the token ${fromEnv ? 'in CONVENE_TOKEN' : 'convene saved'}: ${what} is not linked to your dashboard. ${
        fromEnv ? 'Check CONVENE_TOKEN (`convene whoami` tests it).' : 'Log in again with `convene login`.'
      }`,
    );
  }

  /**
   * Why the server cannot be used (one quick try, no retries): nothing answers, or what answers is
   * not Convene; undefined when it is.
   */
  async unreachable(): Promise<ConnectionError | ConveneError | undefined> {
    try {
      await new Convene({
        baseUrl: this.url,
        fetch: conveneFetch,
        maxRetries: 0,
        timeoutMs: 5_000,
        logger: this.sdkLogger,
      }).health();
      return undefined;
    } catch (error) {
      if (error instanceof ConnectionError || isNotConvene(error)) return error;
      return undefined;
    }
  }

  /** The server the command's requests went to: `url`, or the one an invitation link names. */
  get server(): string {
    return this.requested ?? this.url;
  }

  /**
   * The SDK client for this server (anonymous, plus the user token when there is one). A call it
   * makes waits out a Retry-After of a few seconds at most (WAIT_MAX_MS) unless `longLived`: a
   * loop that runs until stopped or decided (tail, inbox --follow, a join's or a login's wait).
   */
  hub(url: string = this.url, { longLived = false } = {}): Convene {
    this.requested = url;
    const userToken = this.userToken();
    return new Convene({
      baseUrl: url,
      fetch: this.changes.watch(conveneFetch),
      logger: this.sdkLogger,
      // Its info lines too: sdkLogger keeps only the waits after a 429 of them.
      logLevel: 'info',
      ...(longLived ? {} : { maxRetryAfterMs: WAIT_MAX_MS }),
      ...(userToken ? { userToken } : {}),
    });
  }

  /**
   * The space a command acts on: the one named (an id, a saved space's name, or the start of its
   * id), else the default space.
   */
  space(reference: string | undefined): StoredSpace {
    const host = this.host();
    const saved = Object.values(host.spaces);
    if (reference === undefined || reference === '') {
      const chosen = host.defaultSpace ? host.spaces[host.defaultSpace] : undefined;
      if (chosen) {
        this.chosenSpace = { space: chosen, named: false };
        return chosen;
      }
      const elsewhere = saved.length ? undefined : this.savedUnderAlias(undefined);
      throw new (saved.length || elsewhere ? CliError : NoSpaceSavedError)(`no space chosen on ${this.url}`, {
        exitCode: saved.length ? ExitCode.usage : ExitCode.auth,
        hint: saved.length
          ? `Name one (see \`${this.line('space list')}\`) or pick a default with \`${this.line('space use', { args: [verbatim('SPACE')] })}\`.`
          : elsewhere
            ? aliasHint(elsewhere, 'Your space keys are')
            : (this.keysElsewhereHint() ??
              `Create one with \`${this.line('space create', { args: [verbatim('NAME')] })}\`, or join one with \`convene join LINK\`.`),
      });
    }
    const found = find(saved, reference, {
      noun: 'saved space',
      id: (s) => s.spaceId,
      name: (s) => s.name,
    });
    if (found) {
      this.chosenSpace = { space: found, named: true };
      return found;
    }
    const elsewhere = this.savedUnderAlias(reference);
    // Saved for another server (an earlier `serve --port`, a `--url` given once): the key is there.
    const other = elsewhere ? undefined : this.savedForOtherServer(reference);
    const Failure = saved.length || elsewhere ? CliError : NoSpaceSavedError;
    // A whole id names a space, which may well exist: what is missing is its key (exit 4, as any
    // credential). A name or the start of an id names nothing convene knows: not found (exit 5),
    // as a participant or a document named so would be.
    if (isUuid(reference)) {
      throw new Failure(`no key for space ${reference} on ${this.url}`, {
        exitCode: ExitCode.auth,
        hint: elsewhere
          ? aliasHint(elsewhere)
          : other
            ? otherServerHint(other)
            : `Join it with \`convene join ${reference} --key KEY\` (or the invitation link). If you created or joined it while logged in, \`convene login\` then \`convene space use ${reference}\` recovers your key from your account; an owner or participant key you hold (from the SDK or REST) is saved with \`${this.line('space use', { args: [verbatim(reference)], options: { '--key': verbatim('KEY') } })}\`.`,
      });
    }
    if (elsewhere || other) {
      throw new Failure(`no space "${reference}" among those you hold keys for on ${this.url}`, {
        exitCode: ExitCode.notFound,
        hint: elsewhere ? aliasHint(elsewhere) : otherServerHint(other!),
      });
    }
    const near = closest(
      reference,
      saved.map((s) => s.name),
    );
    throw new Failure(`no space "${reference}" among those you hold keys for on ${this.url}`, {
      exitCode: ExitCode.notFound,
      hint: `${near ? `Did you mean "${inline(near)}"? ` : ''}See them, by their current names, with \`${this.line('space list')}\`.`,
    });
  }

  /**
   * The server URL, other than this one, that names this machine's loopback address too
   * (`localhost`, `127.0.0.1`, `[::1]`, same scheme, port and path) and holds a key for
   * `reference` (its default space, when undefined): keys are saved under the URL they were made
   * with, and `serve` prints both `127.0.0.1` and `localhost`.
   */
  private savedUnderAlias(reference: string | undefined): string | undefined {
    return this.aliasWhere((host) =>
      reference === undefined
        ? host.defaultSpace !== undefined
        : Object.values(host.spaces).some(
            (s) => s.spaceId === reference.toLowerCase() || sameName(s.name, reference),
          ),
    );
  }

  /** `--url` again, as given (a line run without it would go to another server), else nothing. */
  urlFlag(): Record<string, Value> {
    return this.options.url !== undefined ? { '--url': verbatim(shellWord(this.url)) } : {};
  }

  /** A command line of a command that acts on no space (`space list`), with `--url` when given. */
  line(words: string, { args, options }: LineParts = {}): string {
    return commandLine(words, { ...(args ? { args } : {}), options: { ...options, ...this.urlFlag() } });
  }

  /** The URL of another server (not this machine's other name for this one) holding a key for `reference`. */
  private savedForOtherServer(reference: string): string | undefined {
    for (const [url, host] of Object.entries(this.store.read().hosts)) {
      if (url === hostKey(this.url)) continue;
      // By its name, its id, or the start of its id (4 characters or more), as spaces are named here.
      const start = reference.length >= 4 ? reference.toLowerCase() : undefined;
      const held = Object.values(host.spaces).some(
        (s) => (start !== undefined && s.spaceId.startsWith(start)) || sameName(s.name, reference),
      );
      if (held) return url;
    }
    return undefined;
  }

  /**
   * The key saved for a space on the server at `url`, under whichever spelling of it (`localhost`
   * and `127.0.0.1` on one port are one server, sameServer): the one convene keeps per space.
   */
  heldKey(url: string, spaceId: string): StoredSpace | undefined {
    const exact = this.store.host(url).spaces[spaceId];
    if (exact) return exact;
    for (const [other, host] of Object.entries(this.store.read().hosts)) {
      if (host.spaces[spaceId] && sameServerAs(other, url)) return host.spaces[spaceId];
    }
    return undefined;
  }

  /** The other spelling of this machine's URL (see savedUnderAlias) that holds keys of any space. */
  keysUnderAlias(): string | undefined {
    return this.aliasWhere((host) => Object.keys(host.spaces).length > 0);
  }

  /**
   * What to say where no key is saved for this server: where keys are saved (another spelling of
   * this machine's address, else other servers, an earlier `serve --port` or CONVENE_URL), if
   * anywhere.
   */
  keysElsewhereHint(): string | undefined {
    const alias = this.keysUnderAlias();
    if (alias) return aliasHint(alias, 'Your space keys are');
    const others = Object.entries(this.store.read().hosts).filter(
      ([url, host]) => url !== hostKey(this.url) && Object.keys(host.spaces).length > 0,
    );
    const [first] = others;
    if (!first) return undefined;
    const spaces = (host: HostEntry) => Object.keys(host.spaces).length;
    const where = others.map(([url, host]) => `${url} (${count(spaces(host), 'space')})`).join(', ');
    const use = `Add \`--url ${first[0]}\` (or set CONVENE_URL) to use ${others.length === 1 && spaces(first[1]) === 1 ? 'it' : 'them'}`;
    // The server remembered (the last space created, joined or used was there) has no key left:
    // `space use` with --url makes the other the server of the next commands, as the README says.
    const back = this.urlIsExplicit
      ? ''
      : `, or \`${backTo(first[0], first[1])}\` to make it the server of the next commands`;
    return `Keys are saved for ${others.length === 1 ? 'another server' : 'other servers'}: ${where}. ${use}${back}.`;
  }

  private aliasWhere(holds: (host: HostEntry) => boolean): string | undefined {
    const here = loopbackKey(this.url);
    if (!here) return undefined;
    for (const [url, host] of Object.entries(this.store.read().hosts)) {
      if (url !== hostKey(this.url) && loopbackKey(url) === here && holds(host)) return url;
    }
    return undefined;
  }

  /**
   * The SDK client bound to a saved space, its key and its participant (so its streams end right
   * after that participant's own kick or departure); failures are explained as this space's.
   * `longLived` for a loop that runs until stopped (tail, inbox --follow): it waits out any
   * Retry-After up to a minute, as the SDK does, where a command fails at once (WAIT_MAX_MS).
   */
  spaceClient(space: StoredSpace, options: { longLived?: boolean } = {}) {
    this.using = { kind: 'space', space };
    return this.hub(this.url, options).space(space.spaceId, space.key, space.participantId);
  }

  /**
   * A space as its server has it now (`getSpace`), its name kept as the server gives it
   * (refreshSpaceNames): what every command that reads a space reads it with.
   */
  async readSpace(client: { get(): PromiseLike<SpaceView> }): Promise<SpaceView> {
    const view = await client.get();
    this.refreshSpaceNames([view]);
    return view;
  }

  /** Whether a dashboard session is saved for this server and has not expired. */
  hasSession(): boolean {
    const stored = this.host().session;
    return stored !== undefined && new Date(stored.expiresAt).getTime() > Date.now();
  }

  /** The dashboard session of `convene login --password`, as an SDK session (exit 4 without one). */
  session() {
    const stored = this.host().session;
    if (!stored || new Date(stored.expiresAt).getTime() <= Date.now()) {
      throw new CliError(
        stored ? 'your dashboard session has expired' : `not logged in to ${this.url} with a password`,
        {
          exitCode: ExitCode.auth,
          hint: 'Log in with `convene login --password` (tokens are managed from the dashboard session).',
        },
      );
    }
    this.using = { kind: 'session' };
    return this.hub().session(stored.token);
  }

  /**
   * Saves a space key and makes the space the default (the last created or joined), for `url`
   * (this command's server by default). `alongside` makes the command's other changes to the file
   * in the same write.
   */
  saveSpace(space: Omit<StoredSpace, 'savedAt'>, { url = this.url, alongside }: SaveOptions = {}): void {
    this.store.updateHost(url, (host, file) => {
      alongside?.(file, host);
      host.spaces[space.spaceId] = { ...space, savedAt: new Date().toISOString() };
      makeDefault(file, host, url, space.spaceId);
    });
  }

  /**
   * saveSpace for a key the server has just made (a space created, a join): when it cannot be
   * saved, the failure shows it (keyNotKept), with `answer`, what the command prints with `--json`,
   * the key in it; `again` is what the failure says of running the command again.
   */
  keepKey(
    space: Omit<StoredSpace, 'savedAt'>,
    answer: Record<string, unknown>,
    options: SaveOptions & { again?: string | undefined } = {},
  ): void {
    try {
      this.saveSpace(space, options);
    } catch (error) {
      if (!(error instanceof CliError)) throw error;
      throw keyNotKept(space, answer, error.message, error, { again: options.again });
    }
  }

  /**
   * Keeps the saved names of spaces as the server now names them (the owner may rename a space
   * after you joined), so the name a listing shows is the one other commands take. Called wherever
   * a command reads a space anyway; the space this command acts on takes the name too, so what it
   * says after (`Left …`, an error) names it as the server does.
   */
  refreshSpaceNames(views: readonly { spaceId: string; name: string }[]): void {
    for (const view of views) this.renameHeld(view.spaceId, view.name);
    const host = this.host();
    const renamed = views.filter((v) => host.spaces[v.spaceId] && host.spaces[v.spaceId]!.name !== v.name);
    if (renamed.length === 0) return;
    this.store.updateHost(this.url, (entry) => {
      for (const { spaceId, name } of renamed) {
        const saved = entry.spaces[spaceId];
        if (saved) saved.name = name;
      }
    });
  }

  /**
   * The freshest name convene knows of a space the command holds: the saved one, which another
   * command may have refreshed since this one read it (a `tail` or `inbox --follow` runs for
   * hours), else the one it read. For what is said when the server can no longer be asked (its
   * keys stopped working).
   */
  latestName(space: StoredSpace): string {
    try {
      const saved = this.host().spaces[space.spaceId]?.name;
      if (saved !== undefined) this.renameHeld(space.spaceId, saved);
    } catch {
      // A credential file that cannot be read now: the name read before stands.
    }
    return space.name;
  }

  /** The name of the space this command acts on, as the objects it holds carry it. */
  private renameHeld(spaceId: string, name: string): void {
    for (const held of [
      this.chosenSpace?.space,
      this.using.kind === 'space' ? this.using.space : undefined,
    ]) {
      if (held?.spaceId === spaceId) held.name = name;
    }
  }

  /**
   * After the default space `spaceId` was left (and forgotten) or closed (and kept, listed as
   * closed): the next command that names no space would say "no space chosen", or act on a space
   * that takes nothing any more. So the one other open space saved for this server becomes the
   * default (the server is asked which are open: a closed one is no better a default than the
   * space just closed); with several, none is (which one is meant, convene cannot know), and with
   * none, nothing changes. Says which on stderr, with how to pick one.
   */
  async defaultAfter(spaceId: string, how: 'left' | 'closed'): Promise<void> {
    const rest = Object.values(this.host().spaces).filter((s) => s.spaceId !== spaceId);
    const hub = this.hub();
    // Over: closed, or its key refused for good (removed from it, left, or a space the server no
    // longer has). A space the server could not be asked about counts as open: nothing says otherwise.
    const over = await mapLimit(rest, 8, (s) =>
      hub
        .space(s.spaceId, s.key)
        .get()
        .then(() => false, keyNoLongerTaken),
    );
    const open = rest.filter((_, i) => !over[i]);
    let now: StoredSpace | undefined;
    this.store.updateHost(this.url, (host) => {
      now = open.length === 1 && host.spaces[open[0]!.spaceId] ? open[0] : undefined;
      if (now) host.defaultSpace = now.spaceId;
      else if (open.length > 1 && host.defaultSpace === spaceId) delete host.defaultSpace;
    });
    const { out } = this;
    const openWord = open.length < rest.length ? ' open' : '';
    if (now) {
      const one =
        how === 'left' ? `the one${openWord} space left here` : `the one other${openWord} space saved here`;
      out.info(`${out.c.bold(inline(now.name))}, ${one}, is your default space now.`);
    } else if (open.length > 1) {
      out.hint(
        `No space is chosen now: pick the default with \`${this.line('space use', { args: [verbatim('NAME')] })}\` (\`${this.line('space list')}\` lists them).`,
      );
    } else if (how === 'left' || rest.length > 0) {
      out.hint(
        `No${rest.length ? ' open' : ''} space is saved here now: create one with \`convene space create NAME\` or join one with \`convene join LINK\`.${
          this.keysElsewhereHint()?.replace(/^/, ' ') ?? ''
        }`,
      );
    }
  }

  /**
   * Whether `spaceId` is the default space of this server: asked before a command forgets or closes
   * a space, which then leaves the default to `defaultAfter`.
   */
  isDefaultSpace(spaceId: string): boolean {
    return this.host().defaultSpace === spaceId;
  }

  /** Forgets a space whose key stopped working for good (left, closed). */
  forgetSpace(spaceId: string): void {
    this.store.updateHost(this.url, (host) => {
      delete host.spaces[spaceId];
      if (host.defaultSpace === spaceId) delete host.defaultSpace;
    });
  }

  /**
   * Fails before acting when the command needs the owner key and the saved key is a
   * participant's. The space is read first, so that the error names it as the server does now
   * (the owner may have renamed it since it was saved: `readSpace` keeps the new name); a read
   * that fails leaves the name saved.
   */
  async requireOwner(space: StoredSpace, action: string): Promise<void> {
    if (space.role !== 'owner') {
      await this.readSpace(this.spaceClient(space)).catch(() => undefined);
      throw new CliError(`only the owner of "${space.name}" can ${action}`, {
        exitCode: ExitCode.auth,
        hint: 'Your key for this space is a participant key; ask the owner.',
        // The server's code for it (401), which a script tells from the others by, as when the
        // server refuses; the owner's action was not sent, so no status.
        details: { code: 'owner_key_required' },
      });
    }
  }
}

/**
 * Makes a space the default of its server, and that server the one the next commands without
 * --url go to: a space created, joined or chosen with `--url` or CONVENE_URL is acted on by
 * `convene send` alone afterwards, as `space create` and `join` say.
 */
export function makeDefault(file: StoreFile, host: HostEntry, url: string, spaceId: string): void {
  host.defaultSpace = spaceId;
  if (rememberedServer(file.url) !== url) file.url = url;
}

/** The server saved for the next commands without --url (localhost:3000 when none, or unreadable). */
export function rememberedServer(saved: string | undefined): string {
  try {
    return saved === undefined ? DEFAULT_URL : normaliseUrl(saved);
  } catch {
    return DEFAULT_URL;
  }
}

/**
 * A server's URL as the credential file keys it. `from` is where the text came from: an error
 * about CONVENE_URL says so, since there is no --url on the command line to correct.
 */
export function normaliseUrl(url: string, from: '--url' | 'CONVENE_URL' = '--url'): string {
  const named = from === 'CONVENE_URL' ? `CONVENE_URL "${url}"` : `"${url}"`;
  const fix = (example: string) =>
    from === 'CONVENE_URL'
      ? `Set CONVENE_URL to the server, e.g. CONVENE_URL=${example}, or unset it.`
      : `Pass the server as --url ${example}.`;
  let key: string;
  try {
    key = hostKey(url);
  } catch {
    throw new UsageError(`${named} is not a URL`, fix('http://host:port'));
  }
  // `localhost:3000` parses, with `localhost:` as its scheme.
  if (!/^https?:\/\//.test(key)) {
    throw new UsageError(
      `${named} is not an http:// or https:// URL`,
      fix(`http://${url.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '')}`),
    );
  }
  return key;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string): boolean => UUID.test(value);

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Whether a URL's hostname names this machine (`localhost`, `127.0.0.1`, `[::1]`). */
export const isLoopback = (hostname: string): boolean => LOOPBACK.has(hostname);

/**
 * What to do when the key is saved under another spelling of this machine's address: `whose`, the
 * key of the space named (`Your key for it is`), or, where none was named, the keys saved.
 */
export const aliasHint = (url: string, whose = 'Your key for it is'): string =>
  `${whose} saved under ${url}, another name for this machine: add \`--url ${url}\` (or set CONVENE_URL=${url}).`;

/**
 * `convene space use NAME --url URL`: the line that makes the server `url` the one the next
 * commands use, with its default space (or its one space) picked, by its name, or its id when
 * another there shares it or a terminal would show it escaped; else NAME to fill in.
 */
function backTo(url: string, host: HostEntry): string {
  const spaces = Object.values(host.spaces);
  const space =
    (host.defaultSpace ? host.spaces[host.defaultSpace] : undefined) ??
    (spaces.length === 1 ? spaces[0] : undefined);
  const shared = space && spaces.some((s) => s.spaceId !== space.spaceId && sameName(s.name, space.name));
  const name: Value = !space
    ? verbatim('NAME')
    : shared || inline(space.name) !== space.name
      ? verbatim(space.spaceId)
      : space.name;
  return commandLine('space use', { args: [name], options: { '--url': verbatim(shellWord(url)) } });
}

/** Where the key of a space named is saved for another server, and how to use it. */
const otherServerHint = (url: string): string =>
  `Your key for it is saved for another server, ${url}: add \`--url ${url}\` (or set CONVENE_URL=${url}).`;

/**
 * Whether two server URLs name one server: the same URL as the credential file keys it, or this
 * machine under two of its names (`localhost` and `127.0.0.1`, as `serve` prints both) otherwise alike.
 */
export function sameServer(a: string, b: string): boolean {
  if (hostKey(a) === hostKey(b)) return true;
  const here = loopbackKey(a);
  return here !== undefined && here === loopbackKey(b);
}

/** sameServer, false for a key of the file that is no URL (edited by hand). */
export function sameServerAs(a: string, b: string): boolean {
  try {
    return sameServer(a, b);
  } catch {
    return false;
  }
}

/** A loopback URL with its host spelt one way (`localhost`), so aliases compare equal; else undefined. */
function loopbackKey(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    if (!isLoopback(parsed.hostname)) return undefined;
    parsed.hostname = 'localhost';
    return hostKey(parsed.toString());
  } catch {
    return undefined;
  }
}
