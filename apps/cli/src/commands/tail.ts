import { type Command, Option } from '@commander-js/extra-typings';
import type { ParticipantView, SpaceClient, StreamEvent } from '@convene/sdk';
import { type App, examples } from '../app';
import type { Context } from '../lib/context';
import { parseSince } from '../lib/duration';
import { stopFollowing } from '../lib/errors';
import { awayHint, removedFrom } from '../lib/failure';
import { parseCount, spaceNamed } from '../lib/input';
import { sayConnectionLost, waitingForStart } from '../lib/outage';
import { inline } from '../lib/output';
import { MessagesSeen, printMessage, when } from '../lib/render';
import { suggest } from '../lib/suggest';
import { moderationTarget } from './moderate';

export function registerTail(program: Command, app: App): void {
  program
    .command('tail')
    .argument('[space]', 'name or id (default: the default space)')
    .option('-s, --space <space>', 'name or id, as SPACE')
    .usage('[SPACE] [options]')
    .summary('follow a space live: messages, joins, locks')
    .description(
      'Follow a space as it happens: messages, people joining and leaving, documents created, ' +
        'edited, locked and unlocked, and by whom. A message not of today shows its date, and a reply ' +
        'what it answers, below it (`↪ in reply to Ada Lovelace: Question for you`). Starts with the last messages (--lines), or everything after ' +
        '--since (its last --lines when both are given). Reconnects by itself (a dropped connection, a server restart) ' +
        'without losing or repeating anything, and says so on stderr ("Connection lost (…), reconnecting…", then ' +
        '"Reconnected"); started while the server does not answer, it waits for it ("Waiting for URL (…)…", ' +
        'then "Connected"); with --json these are {"warning": …} lines, with --quiet unsaid. The space’s ' +
        'closing ends it (exit 0), as Ctrl-C ' +
        'does (exit 0); SIGTERM or SIGHUP stop it (exit 143 or 129); if your key stops working (you were ' +
        'removed), it fails as any command would (exit 4). ' +
        'With --json, one ' +
        'JSON event per line (NDJSON): {"event", "id", "data"}, data as the API sends it, except ' +
        '`context` lines: ' +
        '{"event": "context", "data": {participants, artifacts, suggestedPollingIntervalMs, lastEventId}}, with no ' +
        'id, once after the earlier messages (and after each reconnection), then a fresh one after ' +
        'the lines of participant or document changes (one may follow several). When the space ' +
        'ends it by itself (closed, expired, or you left elsewhere), a last line on stderr says how: ' +
        '{"ended": "closed"|"expired"|"left", "message"} (none at Ctrl-C).',
    )
    .option(
      '--since <time>',
      'start after this: 10m, 2h, 09:30, yesterday, 2030-01-01 12:00, 2030-01-01T12:00:00Z',
    )
    .addOption(
      new Option(
        '-n, --lines <n>',
        'how many earlier messages to show first; with --since, every one after it, or its last n when --lines is given',
      ).default('10', '10'),
    )
    .addHelpText(
      'after',
      examples(
        'convene tail',
        'convene tail "Release plan" --since 1h',
        'convene tail --json | jq -c "select(.event == \\"message\\") | .data.content"',
      ),
    )
    .action(async (argument, options, command) => {
      const ctx = app.context(command);
      const reference = spaceNamed(ctx, argument, options.space, 'convene tail');
      const lines = parseCount(options.lines, '--lines');
      const since = options.since === undefined ? undefined : parseSince(options.since);
      const saved = ctx.space(reference);
      // It runs until stopped: a long Retry-After is waited out, not a reason to end.
      const space = ctx.spaceClient(saved, { longLived: true });
      ctx.handlesInterrupt = true;
      const creators = new Creators((id, timeoutMs) => creatorOf(space, id, ctx.signal, timeoutMs));
      const view = new TailView(
        ctx,
        saved.name,
        saved.participantId,
        saved.role === 'owner',
        // With --since, every message after it unless --lines was given too (its last n).
        since === undefined || command.getOptionValueSource('lines') !== 'default'
          ? lines
          : Number.POSITIVE_INFINITY,
        creators,
      );
      const text = !ctx.out.mode.json;
      const hooks = sayConnectionLost(ctx.out, { server: ctx.server, hint: awayHint(ctx) });
      const open = () => space.messages.stream({ signal: ctx.signal, ...(since ? { since } : {}), ...hooks });
      // Started while the server does not answer: waited for as an outage once live is, said the
      // same way (the SDK throws a first connection's failure).
      const start = waitingForStart(hooks, ctx.signal, ctx.server);
      let stream = open();
      try {
        for (let live = false; ; stream = open()) {
          try {
            for await (const event of stream) {
              if (!live) start.connected();
              live = true;
              // Who created a document, which its event does not carry: asked before its line, when
              // that is cheap (see Creators).
              if (text && event.event === 'artifact-created') await creators.of(event.data.id);
              view.show(event);
            }
            break;
          } catch (error) {
            if (live || !(await start.failed(error))) throw error;
          }
        }
      } catch (error) {
        if (!ctx.signal.aborted) throw error;
      }
      // The SDK ends a live stream quietly, and says why, when reconnecting finds the key refused:
      // the space closed or expired, or you left, while the connection was down (the event that
      // says so was missed), is the same end as when it was seen (exit 0); being removed is exit 4
      // and what to do; a key refused for another reason fails as any command would.
      const ended = stream.ended;
      if (view.departed === 'kicked' || ended?.reason === 'kicked')
        throw removedFrom(ctx, saved, ended?.error);
      if (ended?.reason === 'refused') throw ended.error;
      if (ended?.reason === 'closed') view.closedUnseen(ended.error?.code === 'space_expired');
      if (ended?.reason === 'left') view.leftUnseen();
      view.end(ctx.signal.aborted, JSON.stringify(ctx.latestName(saved)));
      // Stopped rather than ended: Ctrl-C is exit 0, SIGTERM and SIGHUP their codes.
      if (ctx.signal.aborted) stopFollowing(ctx.signal);
    });
}

/**
 * What `tail` prints for each event. The backlog (messages before the first `context`) is held
 * back so only its last lines show; the context bundles keep the names behind ids (who locked a
 * document) and the statuses that tell a join from an unmute.
 */
class TailView {
  private backlog: StreamEvent[] | undefined = [];
  /** The participants as the stream last said them, by id: names, statuses, the owner. */
  private readonly people = new Map<string, ParticipantView>();
  /**
   * Who holds each document's lock, as the stream last said it: an unlock event names only the
   * document (a release, the owner's, a lapse alike), so its line names whose lock it was.
   */
  private readonly holders = new Map<string, string>();
  /** The messages shown or held back: what a reply answers is named from them. */
  private readonly seen = new MessagesSeen();
  /** How the space ended while it was followed, if it did: the stream's end needs no explaining. */
  private closedAs: 'closed' | 'expired' | undefined;
  /** Your own status as the stream last said it (the SDK ends the stream after a kick or leaving). */
  private myStatus: string | undefined;

  constructor(
    private readonly ctx: Context,
    private readonly spaceName: string,
    private readonly me: string,
    /** Whether you own the space: only the owner is shown the `approve` that admits a joiner. */
    private readonly owner: boolean,
    private readonly lines: number,
    /** Who created each document announced, as far as it was asked (see Creators). */
    private readonly creators: Creators,
  ) {}

  show(event: StreamEvent): void {
    if (event.event === 'context') {
      for (const p of event.data.participants) this.people.set(p.participantId, p);
      this.holders.clear();
      for (const a of event.data.artifacts) if (a.lockedBy) this.holders.set(a.id, a.lockedBy);
      if (this.backlog) {
        const held = this.backlog.slice(Math.max(0, this.backlog.length - this.lines));
        this.backlog = undefined;
        for (const e of held) this.print(e);
        // Who asked to join before tail started: otherwise only requests made while it runs show.
        // When they asked is not known (the stream replays messages only): said as where things
        // stand, with no time, which would be made up (the time tail started, after newer lines).
        if (!this.ctx.out.mode.json) {
          // The owner's lines each carry the command that approves that request; anyone else's
          // would be the same line again for each request of one name: said once, counted.
          const requests = new Map<string, { name: string; approve: string | undefined; count: number }>();
          for (const p of event.data.participants) {
            if (p.status !== 'waitingForApproval' || p.participantId === this.me) continue;
            const approve = this.approve(p);
            const key = approve ?? `name:${p.name}`;
            const seen = requests.get(key);
            if (seen) seen.count++;
            else requests.set(key, { name: p.name, approve, count: 1 });
          }
          const { out } = this.ctx;
          for (const { name, approve, count } of requests.values()) {
            const many = count > 1 ? `${count} requests, ` : '';
            out.line(
              out.c.dim(
                `${inline(name)} is waiting to join (${many}since before you started following${approve ? `; \`${approve}\`` : ''})`,
              ),
            );
          }
        }
        this.ctx.out.info(this.ctx.out.c.dim(`Following ${this.spaceName} live (Ctrl-C to stop)`));
      }
      if (this.ctx.out.mode.json) this.ctx.out.jsonLine(event);
      return;
    }
    if (event.event === 'artifact-locked' && event.data.lockedBy)
      this.holders.set(event.data.id, event.data.lockedBy);
    if (event.event === 'participant-status' && event.data.participantId === this.me) {
      this.myStatus = event.data.status;
    }
    if (event.event === 'message' && !this.ctx.out.mode.json) this.seen.add(event.data);
    if (this.backlog && event.event === 'message') {
      this.backlog.push(event);
      return;
    }
    this.print(event);
  }

  /** A participant by name (or id, before any context named them); you are "you", in every line. */
  private who(participantId: string): string {
    return participantId === this.me ? 'you' : (this.people.get(participantId)?.name ?? participantId);
  }

  /** " by NAME" of a participant id, when there is one. */
  private by(participantId: string | undefined): string {
    return participantId === undefined ? '' : ` by ${this.who(participantId)}`;
  }

  /** You left (elsewhere) or were removed while following: the stream ended there. */
  get departed(): 'left' | 'kicked' | undefined {
    return this.myStatus === 'left' || this.myStatus === 'kicked' ? this.myStatus : undefined;
  }

  /** The space closed (or expired) while the connection was down, so its event never came. */
  closedUnseen(expired: boolean): void {
    if (this.closedAs) return;
    this.closeSeen(expired);
    if (!this.ctx.out.mode.json) this.note(expired ? 'the space expired' : 'the space was closed');
  }

  /** You left (elsewhere) while the connection was down, so your own status change never came. */
  leftUnseen(): void {
    if (this.departed) return;
    this.myStatus = 'left';
    if (!this.ctx.out.mode.json) this.note('You left (elsewhere)');
  }

  /** The stream is over: what was held back, and how it ended; `name` the space's as it is now, quoted. */
  end(interrupted: boolean, name: string): void {
    if (this.backlog) for (const e of this.backlog.slice(-this.lines)) this.print(e);
    const { out } = this.ctx;
    if (!interrupted && !this.closedAs && !this.departed) out.info(out.c.dim('The stream ended.'));
    if (interrupted) return;
    const ended = this.closedAs ?? (this.departed === 'left' ? 'left' : undefined);
    if (ended) out.endedJson(ended, name);
  }

  private closeSeen(expired: boolean): void {
    this.closedAs = expired ? 'expired' : 'closed';
  }

  /** A line of what happened (not a message): one line, whatever the names in it hold. */
  private note(text: string): void {
    const { out } = this.ctx;
    out.line(`${out.c.dim(when(new Date().toISOString()))}  ${out.c.dim(inline(text))}`);
  }

  private print(event: StreamEvent): void {
    const { out } = this.ctx;
    if (out.mode.json) {
      out.jsonLine(event);
      if (event.event === 'space-closed') this.closeSeen(event.data.reason === 'expired');
      return;
    }
    const note = (text: string) => this.note(text);
    switch (event.event) {
      case 'message':
        printMessage(out, event.data, this.me, this.seen);
        return;
      case 'participant-status': {
        const p = event.data;
        const before = this.people.get(p.participantId)?.status;
        this.people.set(p.participantId, p);
        const change = this.statusChange(p, before);
        if (p.participantId !== this.me) {
          note(`${p.name} ${change}`);
          return;
        }
        note(`You (${p.name}) ${change.replace(/^was /, 'were ').replace(/^asks /, 'ask ')}`);
        return;
      }
      case 'artifact-created':
        note(`document "${event.data.name}" created${this.by(this.creators.found(event.data.id))}`);
        return;
      case 'artifact-updated': {
        // Only the lock holder writes, and a write keeps the lock: its holder saved the version.
        const by = this.by(event.data.lockedBy);
        note(`document "${event.data.name}" is now version ${event.data.version}${by ? `, saved${by}` : ''}`);
        return;
      }
      case 'artifact-locked': {
        const holder = event.data.lockedBy ? this.who(event.data.lockedBy) : 'someone';
        const until = event.data.lockExpiresAt ? ` until ${when(event.data.lockExpiresAt)}` : '';
        note(`document "${event.data.name}" locked by ${holder}${until}`);
        return;
      }
      case 'artifact-unlocked': {
        const held = this.holders.get(event.data.id);
        this.holders.delete(event.data.id);
        const whose =
          held === undefined ? '' : held === this.me ? ' (your lock)' : ` (${this.who(held)}’s lock)`;
        note(`document "${event.data.name}" unlocked${whose}`);
        return;
      }
      case 'space-closed':
        this.closeSeen(event.data.reason === 'expired');
        note(event.data.reason === 'expired' ? 'the space expired' : 'the space was closed');
        return;
      default:
        return;
    }
  }

  /** A participant's new status in words, from the one it had (`undefined`: not seen before). */
  private statusChange(p: ParticipantView, before: string | undefined): string {
    return statusChange(before, p.status, this.approve(p));
  }

  /**
   * The command line that admits `p`, for the owner alone (anyone else's `approve` is refused):
   * by name when that names them to `approve`, else by id.
   */
  private approve(p: ParticipantView): string | undefined {
    if (!this.owner) return undefined;
    const target = moderationTarget('approve', [...this.people.values()], p);
    return suggest(this.ctx, 'approve', { args: [target] });
  }
}

/**
 * Who created each document `tail` announces, asked of its history (one request) only when that is
 * cheap, since the stream waits for the answer and the requests count against the follower's rate
 * limit: once a document (kept), at most `perMinute` a minute (a burst of `perMinute`, then one
 * every 60/`perMinute` s): a burst of created documents delays the lines after it by `perMinute`
 * lookups at most (each at most `timeoutMs`). Otherwise the line is printed without "by NAME". (A
 * rule skipping documents announced within a second of a lookup's end made what `tail` printed
 * depend on timing.)
 */
export class Creators {
  private readonly known = new Map<string, string>();
  private tokens: number;
  private refilled: number;

  constructor(
    private readonly lookup: (artifactId: string, timeoutMs: number) => Promise<string | undefined>,
    private readonly options: {
      perMinute: number;
      timeoutMs: number;
      now: () => number;
    } = {
      perMinute: 3,
      timeoutMs: 2000,
      now: () => performance.now(),
    },
  ) {
    this.tokens = options.perMinute;
    this.refilled = options.now();
  }

  /** The creator's participantId as found already (no request), undefined when not. */
  found(artifactId: string): string | undefined {
    return this.known.get(artifactId);
  }

  /** The creator's participantId, undefined when not known or not asked. */
  async of(artifactId: string): Promise<string | undefined> {
    const known = this.known.get(artifactId);
    if (known !== undefined) return known;
    const { perMinute, timeoutMs, now } = this.options;
    const start = now();
    const every = 60_000 / perMinute;
    const earned = Math.floor((start - this.refilled) / every);
    if (earned > 0) {
      this.tokens = Math.min(perMinute, this.tokens + earned);
      this.refilled = this.tokens === perMinute ? start : this.refilled + earned * every;
    }
    if (this.tokens < 1) return undefined;
    this.tokens -= 1;
    const creator = await this.lookup(artifactId, timeoutMs);
    if (creator !== undefined) this.known.set(artifactId, creator);
    return creator;
  }
}

/**
 * Who created a document: the author of its version 1, from its history (the artifact-created
 * event carries no author). Asked once, without retries, within `timeoutMs`; unknown when that
 * fails.
 */
async function creatorOf(space: SpaceClient, artifactId: string, signal: AbortSignal, timeoutMs: number) {
  try {
    const { versions } = await space.artifacts.history(artifactId, { signal, maxRetries: 0, timeoutMs });
    return versions.find((v) => v.version === 1)?.updatedBy;
  } catch {
    return undefined;
  }
}

/** `approve`: the command line that admits the participant waiting to join, for the owner. */
function statusChange(before: string | undefined, after: string, approve: string | undefined): string {
  switch (after) {
    case 'waitingForApproval':
      return approve ? `asks to join (\`${approve}\`)` : 'asks to join';
    case 'active':
      return before === 'muted'
        ? 'was unmuted'
        : before === 'waitingForApproval'
          ? 'was approved and joined'
          : 'joined';
    case 'muted':
      return 'was muted';
    case 'left':
      return 'left';
    case 'kicked':
      // A refused request is recorded as a removal (`kicked`): said as what the owner did.
      return before === 'waitingForApproval' ? 'was refused' : 'was removed';
    default:
      return `is now ${after}`;
  }
}
