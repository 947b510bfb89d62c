import { inline, type Output, truncate } from './output';

/** The fields of a message the CLI shows (the API's MessageView). */
export interface MessageLike {
  id?: string;
  senderName: string;
  isOwner: boolean;
  content: string;
  type: 'text' | 'html' | 'image';
  timestamp: string;
  /** The participants it mentions (explicitly or by `@Name`). */
  mentions?: readonly string[];
  /** The message it answers. */
  replyTo?: string | undefined;
}

/**
 * A message's content as a line shows it: an image given as a data: URI (up to 1 MiB, a line of
 * 1.3 million characters) by its media type and size, which `--json` has whole; an https: URL,
 * and any other message, as it is.
 */
function shown(message: Pick<MessageLike, 'type' | 'content'>): string {
  const data = message.type === 'image' ? /^data:([^;,]*)((?:;[^;,]*)*),/i.exec(message.content) : null;
  if (!data) return message.content;
  const payload = message.content.slice(data[0].length);
  const base64 = /;base64$/i.test(data[2] ?? '');
  const bytes = base64
    ? Math.floor((payload.length * 3) / 4) - (payload.match(/=+$/)?.[0].length ?? 0)
    : payload.length;
  return `${data[1] || 'data'}, ${size(bytes)} (a data: URI: --json has it whole)`;
}

/** A number of bytes for people: `512 bytes`, `2.9 KiB`, `1 MiB`. */
export function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  const [value, unit] = bytes < 1024 * 1024 ? [bytes / 1024, 'KiB'] : [bytes / 1024 / 1024, 'MiB'];
  return `${value.toFixed(1).replace(/\.0$/, '')} ${unit}`;
}

/** A timestamp for people: the time of day for today, else the date too. */
export function when(iso: string, now: Date = new Date()): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const pad = (n: number) => String(n).padStart(2, '0');
  const time = `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
  if (date.toDateString() === now.toDateString()) return time;
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${time.slice(0, 5)}`;
}

/** `3 min ago`, `in 8 min`: how far an instant is from now. */
export function relative(iso: string, now: Date = new Date()): string {
  const seconds = Math.round((new Date(iso).getTime() - now.getTime()) / 1000);
  // Within half a second either way (a just-saved version: -0 would read "in 0 s").
  if (seconds === 0) return 'now';
  const abs = Math.abs(seconds);
  const text =
    abs < 60
      ? `${abs} s`
      : abs < 3600
        ? `${Math.round(abs / 60)} min`
        : abs < 86_400
          ? `${Math.round(abs / 3600)} h`
          : `${Math.round(abs / 86_400)} d`;
  return seconds >= 0 ? `in ${text}` : `${text} ago`;
}

/**
 * The messages a listing or a stream has shown so far, by id, for the replies among them to name
 * what they answer: the last `max` of them (a long `tail` forgets the oldest).
 */
export class MessagesSeen {
  private readonly byId = new Map<string, Answered>();

  constructor(private readonly max = 10_000) {}

  add(message: MessageLike & { id: string }): void {
    // Only what a snippet shows is kept, not a long text whole.
    const { senderName, type, content } = message;
    this.byId.set(message.id, {
      senderName,
      type,
      content: type === 'image' ? shown(message) : content.slice(0, 240),
    });
    if (this.byId.size > this.max) this.byId.delete(this.byId.keys().next().value!);
  }

  get(id: string): Answered | undefined {
    return this.byId.get(id);
  }
}

/** What a reply marker shows of the message answered. */
type Answered = Pick<MessageLike, 'senderName' | 'type' | 'content'>;

/** The start of a message, its first line cut to 60 columns (`[image] https://…` for an image). */
function snippet(message: Answered): string {
  const label = message.type === 'text' ? '' : `[${message.type}] `;
  const first = inline(`${label}${shown(message).split('\n')[0]}`);
  const cut = truncate(first, 60);
  return cut === first && message.content.includes('\n') ? `${cut} …` : cut;
}

/** The start of an id a person reads and types back (`--reply-to 3751a2b4`): its first 8 characters. */
const shortId = (id: string): string => id.slice(0, 8);

/**
 * One message as the terminal shows it: time (with the date when not today), the start of its id,
 * sender (the owner's followed by `(owner)`), content (indented when multi-line); marked `[@you]`
 * when it mentions `me` (your participant id). The id's start is what `--reply-to` takes, so a
 * message read here can be answered without a `--json` or `-q` listing to find its id; dim, as the
 * time is, since it is there to be copied rather than read. A reply is followed by what it answers,
 * `↪ in reply to Ada Lovelace: Question for you`, from `seen` when that holds it, else by the
 * same start of the id (`↪ in reply to message 3751a2b4`): below it, indented as its own lines
 * are, so that it reads as the reply's (above it, it read as a line of the message before).
 */
export function printMessage(out: Output, message: MessageLike, me?: string, seen?: MessagesSeen): void {
  const { c } = out;
  // The header is one line: a newline in a name would start a made-up message.
  const sender = inline(message.senderName);
  // The owner is marked in words, not only in colour: names need not be unique, and without
  // colour (a pipe, NO_COLOR) a participant named as the owner would read as the owner.
  const name = message.isOwner ? `${c.bold(c.cyan(sender))} ${c.dim('(owner)')}` : c.bold(sender);
  const mark = me !== undefined && message.mentions?.includes(me) ? ` ${c.bold(c.yellow('[@you]'))}` : '';
  const label = message.type === 'text' ? '' : `${c.magenta(`[${message.type}]`)} `;
  const [first, ...rest] = shown(message).split('\n');
  const id = message.id === undefined ? '' : `${c.dim(shortId(message.id))}  `;
  out.line(`${c.dim(when(message.timestamp))}  ${id}${name}${mark}: ${label}${first}`);
  for (const line of rest) out.line(`          ${line}`);
  if (message.replyTo !== undefined) {
    const answered = seen?.get(message.replyTo);
    const marker = answered
      ? `↪ in reply to ${inline(answered.senderName)}: ${snippet(answered)}`
      : `↪ in reply to message ${shortId(message.replyTo)}`;
    out.line(`          ${c.dim(marker)}`);
  }
}

/**
 * A participant's status as the API words it (`waitingForApproval`, `kicked`), coloured: the word
 * a table shows is the one `--json` and a `jq 'select(.status == …)'` use.
 */
export function styleStatus(out: Output, status: string, text: string = status): string {
  switch (status) {
    case 'active':
      return out.c.green(text);
    case 'waitingForApproval':
    case 'muted':
      return out.c.yellow(text);
    default:
      return out.c.dim(text);
  }
}

/** "a", "a or b", "a, b or c". */
export const listed = (items: readonly string[]): string =>
  items.length < 2 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;

/**
 * Who you are in a space, as `whoami` and `space show` say it: `Ada, a human, role reviewer`,
 * `the owner` when the role does not say it, and the status when it is not plain `active`
 * (`, muted`).
 */
export const youAre = (me: {
  name: string;
  role?: string | undefined;
  isHuman: boolean;
  isOwner?: boolean | undefined;
  status: string;
}): string =>
  `${inline(me.name)}, ${me.isHuman ? 'a human' : 'an agent'}${me.role ? `, role ${inline(me.role)}` : ''}${me.isOwner && me.role !== 'owner' ? ', the owner' : ''}${me.status === 'active' ? '' : `, ${me.status}`}`;
