import { type TSendMessageRequest, ZJoinRequest, ZSendMessageRequest } from '@convene/contract';
import {
  type Deps,
  getJoinStatus,
  getMessageThread,
  JoinRefusedError,
  joinSpace,
  type KeyRole,
  longPoll,
  type MessageThread,
  NotFoundError,
  type StreamEvent,
  sendMessage,
  UnauthorizedError,
} from '@convene/core';
import { z } from 'zod';
import {
  A2A_ERRORS,
  A2AError,
  type A2AMessageIn,
  type A2AStatusUpdate,
  type A2ATask,
  type MessageSendParams,
  type TaskQueryParams,
} from './protocol';
import { a2aMessage, joinTask, joinTaskId, messageTask, parseJoinTaskId } from './tasks';

/** Who calls, on which space: A2A requests carry a space key and nothing else names the space. */
export interface A2AContext {
  deps: Deps;
  key: string;
  spaceId: string;
  role: KeyRole;
  /** Aborted when the client goes away or the server shuts down. */
  signal: AbortSignal;
}

/** How long a blocking message/send waits for an answer (a task still working is answered then). */
export const BLOCKING_WAIT_SECONDS = 25;
/** How long a stream follows a task before it ends (the client resubscribes with tasks/resubscribe). */
export const STREAM_MAX_MS = 10 * 60 * 1000;

export interface ArtifactUpdate {
  kind: 'artifact-update';
  taskId: string;
  contextId: string;
  artifact: NonNullable<A2ATask['artifacts']>[number];
  lastChunk: boolean;
}

export type StreamItem = A2ATask | A2AStatusUpdate | ArtifactUpdate;

/**
 * message/send. With a participant or owner key it posts the message into the space: its task is
 * the message, working until someone answers it (getMessageThread), and `blocking` waits for that
 * answer. With an invitation key it joins: a data part `{name, role?, isHuman?}` says who; its task
 * is the join, completed with the participant key at once in a public space, and submitted in a
 * private one until the owner approves.
 */
export async function sendA2AMessage(ctx: A2AContext, params: MessageSendParams): Promise<A2ATask> {
  checkContext(ctx, params.message);
  const blocking = params.configuration?.blocking === true;
  if (ctx.role === 'invitation') {
    const task = await join(ctx, params.message);
    if (!blocking || task.status.state !== 'submitted') return task;
    return waitForJoin(ctx, task.id, BLOCKING_WAIT_SECONDS);
  }
  const sent = await post(ctx, params.message);
  const thread = await longPoll({
    watch: ctx.deps.watch,
    spaceId: ctx.spaceId,
    waitSeconds: blocking ? BLOCKING_WAIT_SECONDS : 0,
    signal: ctx.signal,
    // Posted already: a wait cut off by the server closing answers the task as it stands
    // (working), never shutting_down, which would have the client post it again.
    cutOff: 'last-read',
    read: () => getMessageThread({ deps: ctx.deps, spaceId: ctx.spaceId, key: ctx.key, messageId: sent }),
    hasNews: (t) => t.reply !== undefined,
    wakesOn: (event) => event.kind !== 'artifact-created' && !event.kind.startsWith('artifact-'),
  });
  return messageTask(ctx.spaceId, thread, params.configuration?.historyLength);
}

/** message/stream: the same, then the task's progress as it happens, until it ends. */
export async function* streamA2AMessage(
  ctx: A2AContext,
  params: MessageSendParams,
): AsyncGenerator<StreamItem> {
  checkContext(ctx, params.message);
  if (ctx.role === 'invitation') {
    const task = await join(ctx, params.message);
    yield task;
    if (task.status.state === 'submitted') yield* followJoin(ctx, task.id);
    return;
  }
  const sent = await post(ctx, params.message);
  yield* followMessage(ctx, sent);
}

/** tasks/get: a message's task (participant or owner key) or a join's (its invitation key). */
export async function getA2ATask(ctx: A2AContext, params: TaskQueryParams): Promise<A2ATask> {
  if (ctx.role === 'invitation') return joinState(ctx, params.id);
  return messageTask(ctx.spaceId, await thread(ctx, params.id), params.historyLength);
}

/** tasks/resubscribe: the task as it is, then its progress. */
export async function* resubscribeA2ATask(
  ctx: A2AContext,
  params: TaskQueryParams,
): AsyncGenerator<StreamItem> {
  if (ctx.role === 'invitation') {
    const task = await joinState(ctx, params.id);
    yield task;
    if (task.status.state === 'submitted') yield* followJoin(ctx, task.id);
    return;
  }
  yield* followMessage(ctx, params.id);
}

function checkContext(ctx: A2AContext, message: A2AMessageIn): void {
  if (message.role !== 'user')
    throw new A2AError(A2A_ERRORS.invalidParams, 'messages sent to this agent have role user');
  if (message.contextId !== undefined && message.contextId !== ctx.spaceId)
    throw new A2AError(A2A_ERRORS.invalidParams, 'contextId must be the space this key belongs to');
}

const ZAddressing = z.object({
  mentions: z.array(z.string()).optional(),
  replyTo: z.string().optional(),
});

/** Posts an A2A message as a space message: its text parts (or one https: image), addressed by data or metadata. */
async function post(ctx: A2AContext, message: A2AMessageIn): Promise<string> {
  const texts = message.parts.flatMap((p) => (p.kind === 'text' ? [p.text] : []));
  const files = message.parts.flatMap((p) => (p.kind === 'file' && p.file.uri ? [p.file.uri] : []));
  const data = Object.assign({}, ...message.parts.flatMap((p) => (p.kind === 'data' ? [p.data] : [])));
  const addressing = ZAddressing.parse({ ...message.metadata, ...data });
  const body: Pick<TSendMessageRequest, 'content' | 'type'> =
    texts.length === 0 && files.length === 1
      ? { content: files[0]!, type: 'image' }
      : { content: texts.join('\n\n'), type: 'text' };
  if (!body.content) throw new A2AError(A2A_ERRORS.invalidParams, 'a message needs a text part');
  const replyTo = addressing.replyTo ?? message.referenceTaskIds?.[0] ?? message.taskId;
  const input = ZSendMessageRequest.parse({
    spaceId: ctx.spaceId,
    ...body,
    ...(addressing.mentions ? { mentions: addressing.mentions } : {}),
    ...(replyTo ? { replyTo } : {}),
  });
  const { messageId } = await sendMessage({ deps: ctx.deps, spaceId: ctx.spaceId, key: ctx.key, input });
  return messageId;
}

async function thread(ctx: A2AContext, messageId: string): Promise<MessageThread> {
  try {
    return await getMessageThread({ deps: ctx.deps, spaceId: ctx.spaceId, key: ctx.key, messageId });
  } catch (error) {
    if (error instanceof NotFoundError) throw new A2AError(A2A_ERRORS.taskNotFound, 'task not found');
    throw error;
  }
}

/** Follows a message's task: what others say meanwhile (working), then the answer (completed). */
async function* followMessage(ctx: A2AContext, messageId: string): AsyncGenerator<StreamItem> {
  const wakes = await Wakeups.subscribe(
    ctx,
    (event) => event.kind === 'message' || event.kind === 'space-closed',
  );
  try {
    let current = await thread(ctx, messageId);
    yield messageTask(ctx.spaceId, current);
    let told = current.between.length;
    const deadline = Date.now() + STREAM_MAX_MS;
    while (!current.reply && (await wakes.next(deadline))) {
      current = await thread(ctx, messageId);
      for (const m of current.between.slice(told))
        yield statusUpdate(ctx, messageId, 'working', a2aMessage(ctx.spaceId, m, 'agent', messageId), false);
      told = current.between.length;
      if (current.reply)
        yield statusUpdate(
          ctx,
          messageId,
          'completed',
          a2aMessage(ctx.spaceId, current.reply, 'agent', messageId),
          true,
        );
    }
  } finally {
    wakes.close();
  }
}

const statusUpdate = (
  ctx: A2AContext,
  taskId: string,
  state: A2ATask['status']['state'],
  message: A2ATask['status']['message'],
  final: boolean,
): A2AStatusUpdate => ({
  kind: 'status-update',
  taskId,
  contextId: ctx.spaceId,
  status: { state, timestamp: new Date().toISOString(), ...(message ? { message } : {}) },
  final,
});

/** Joins with the invitation key; the join's task. */
async function join(ctx: A2AContext, message: A2AMessageIn): Promise<A2ATask> {
  const data = Object.assign({}, ...message.parts.flatMap((p) => (p.kind === 'data' ? [p.data] : [])));
  const who = ZJoinRequest.safeParse({ ...message.metadata, ...data });
  if (!who.success)
    throw new A2AError(
      A2A_ERRORS.invalidParams,
      'to join, send a data part {name, role?, isHuman?} with the invitation key',
      { issues: who.error.issues.map(({ path, message: m }) => ({ path, message: m })) },
    );
  const { name, role, isHuman } = who.data;
  const { result, pending } = await joinSpace({
    deps: ctx.deps,
    spaceId: ctx.spaceId,
    key: ctx.key,
    input: { name, ...(role !== undefined ? { role } : {}), ...(isHuman !== undefined ? { isHuman } : {}) },
  });
  const pollToken = (result as { pollToken?: string }).pollToken;
  if (!pending)
    return joinTask(ctx.spaceId, result.participantId, 'completed', {
      ...(result.participantPrivateKey ? { key: result.participantPrivateKey } : {}),
    });
  return joinTask(ctx.spaceId, joinTaskId(result.participantId, pollToken), 'submitted', {
    ...(pollToken ? { pollToken } : {}),
    reason: 'waiting for the owner to approve the join',
  });
}

/**
 * Where a join stands, asked with its invitation key and its task id (which carries the join's
 * pollToken); the key is handed out for 10 minutes after the first time, as by getJoinStatus.
 */
async function joinState(ctx: A2AContext, taskId: string): Promise<A2ATask> {
  const { participantId, pollToken } = parseJoinTaskId(taskId);
  try {
    const { result, pending } = await getJoinStatus({
      deps: ctx.deps,
      spaceId: ctx.spaceId,
      participantId,
      key: ctx.key,
      ...(pollToken ? { pollToken } : {}),
      requirePollToken: true,
    } as Parameters<typeof getJoinStatus>[0]);
    if (pending)
      return joinTask(ctx.spaceId, taskId, 'submitted', {
        ...(pollToken ? { pollToken } : {}),
        reason: 'waiting for the owner to approve the join',
      });
    return joinTask(ctx.spaceId, taskId, 'completed', {
      ...(result.participantPrivateKey ? { key: result.participantPrivateKey } : {}),
    });
  } catch (error) {
    if (error instanceof JoinRefusedError)
      return joinTask(ctx.spaceId, taskId, 'rejected', { reason: error.message });
    if (error instanceof NotFoundError)
      throw new A2AError(
        A2A_ERRORS.taskNotFound,
        'task not found (a join’s key is handed out for 10 minutes after the first time: the task is gone after)',
      );
    // A join waiting for approval is followed by the task id message/send answered, which holds
    // its pollToken; its participantId alone names no task.
    if (error instanceof UnauthorizedError && pollToken === undefined)
      throw new A2AError(A2A_ERRORS.taskNotFound, 'task not found: use the task id message/send answered');
    throw error;
  }
}

async function waitForJoin(ctx: A2AContext, taskId: string, seconds: number) {
  const { participantId } = parseJoinTaskId(taskId);
  return longPoll({
    watch: ctx.deps.watch,
    spaceId: ctx.spaceId,
    waitSeconds: seconds,
    signal: ctx.signal,
    // Joined already: cut off, the join's task as it stands (submitted), not a second join.
    cutOff: 'last-read',
    read: () => joinState(ctx, taskId),
    hasNews: (task) => task.status.state !== 'submitted',
    wakesOn: (event) => concernsJoin(event, participantId),
  });
}

const concernsJoin = (event: StreamEvent, participantId: string): boolean =>
  event.kind === 'space-closed' ||
  (event.kind === 'participant-status' &&
    (event.data as { participantId?: string }).participantId === participantId);

/** Follows a join until the owner decides: the key as the task's artifact, then completed (or rejected). */
async function* followJoin(ctx: A2AContext, taskId: string): AsyncGenerator<StreamItem> {
  const { participantId } = parseJoinTaskId(taskId);
  const wakes = await Wakeups.subscribe(ctx, (event) => concernsJoin(event, participantId));
  try {
    const deadline = Date.now() + STREAM_MAX_MS;
    let task = await joinState(ctx, taskId);
    while (task.status.state === 'submitted' && (await wakes.next(deadline)))
      task = await joinState(ctx, taskId);
    if (task.status.state === 'submitted') return;
    for (const artifact of task.artifacts ?? [])
      yield {
        kind: 'artifact-update',
        taskId,
        contextId: ctx.spaceId,
        artifact,
        lastChunk: true,
      };
    yield statusUpdate(ctx, taskId, task.status.state, task.status.message, true);
  } finally {
    wakes.close();
  }
}

/** Space events that matter to a stream, as wake-ups it awaits one at a time. */
class Wakeups {
  private pending = false;
  private wake: (() => void) | undefined;
  private unsubscribe: () => void = () => {};

  private constructor(private readonly signal: AbortSignal) {}

  static async subscribe(ctx: A2AContext, wanted: (event: StreamEvent) => boolean): Promise<Wakeups> {
    const wakes = new Wakeups(ctx.signal);
    if (ctx.deps.watch) {
      wakes.unsubscribe = await ctx.deps.watch.watch(ctx.spaceId, (event) => {
        if (!wanted(event)) return;
        wakes.pending = true;
        wakes.wake?.();
      });
    }
    ctx.signal.addEventListener('abort', () => wakes.wake?.(), { once: true });
    return wakes;
  }

  /** Resolves true at the next wanted event, false at the deadline or when the caller is gone. */
  async next(deadline: number): Promise<boolean> {
    while (!this.pending) {
      const left = deadline - Date.now();
      if (left <= 0 || this.signal.aborted) return false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
    this.pending = false;
    return !this.signal.aborted;
  }

  close(): void {
    this.unsubscribe();
  }
}
