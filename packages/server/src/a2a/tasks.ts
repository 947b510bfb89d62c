import type { TMessageView } from '@convene/contract';
import type { MessageThread } from '@convene/core';
import type { A2AArtifact, A2AMessage, A2ATask, TaskState } from './protocol';

/** A message of the space as A2A sees it: the caller's own as `user`, everyone else's as `agent`. */
export function a2aMessage(
  spaceId: string,
  view: TMessageView,
  role: 'user' | 'agent',
  taskId?: string,
): A2AMessage {
  const parts: A2AMessage['parts'] =
    view.type === 'image' && view.content.startsWith('https:')
      ? [{ kind: 'file', file: { uri: view.content } }]
      : [{ kind: 'text', text: view.content }];
  return {
    kind: 'message',
    role,
    messageId: view.id,
    contextId: spaceId,
    ...(taskId ? { taskId } : {}),
    parts,
    metadata: {
      senderId: view.senderId,
      senderName: view.senderName,
      type: view.type,
      seq: view.seq,
      timestamp: view.timestamp,
      mentions: view.mentions,
      ...(view.replyTo ? { replyTo: view.replyTo } : {}),
    },
  };
}

/**
 * The task of a message posted over A2A: `working` until someone answers it, then `completed`
 * with the answer as its status message. Its history is the message, what others said meanwhile,
 * and the answer; `historyLength` keeps the last ones.
 */
export function messageTask(spaceId: string, thread: MessageThread, historyLength?: number): A2ATask {
  const id = thread.message.id;
  const history = [
    a2aMessage(spaceId, thread.message, 'user', id),
    ...thread.between.map((m) => a2aMessage(spaceId, m, 'agent', id)),
    ...(thread.reply ? [a2aMessage(spaceId, thread.reply, 'agent', id)] : []),
  ];
  return {
    kind: 'task',
    id,
    contextId: spaceId,
    status: {
      state: thread.reply ? 'completed' : 'working',
      timestamp: (thread.reply ?? thread.message).timestamp,
      ...(thread.reply ? { message: a2aMessage(spaceId, thread.reply, 'agent', id) } : {}),
    },
    history: historyLength === undefined ? history : historyLength === 0 ? [] : history.slice(-historyLength),
    metadata: { spaceId, messageId: id, seq: thread.message.seq },
  };
}

/**
 * A join's task id: the participantId and, for a join that waits for approval, its pollToken. Only
 * the joiner learns it, so holding the task id is what tells them from anyone else holding the
 * invitation key (as the pollToken does over REST), and a plain A2A client needs nothing else
 * to follow the task.
 */
export const joinTaskId = (participantId: string, pollToken?: string): string =>
  pollToken ? `${participantId}.${pollToken}` : participantId;

export function parseJoinTaskId(taskId: string): { participantId: string; pollToken?: string } {
  const dot = taskId.indexOf('.');
  if (dot < 0) return { participantId: taskId };
  return { participantId: taskId.slice(0, dot), pollToken: taskId.slice(dot + 1) };
}

/** The task of a join: submitted while the owner decides, completed with the key, or rejected. */
export function joinTask(
  spaceId: string,
  taskId: string,
  state: TaskState,
  extra: { key?: string; pollToken?: string; reason?: string } = {},
): A2ATask {
  const { participantId } = parseJoinTaskId(taskId);
  const artifacts: A2AArtifact[] | undefined = extra.key
    ? [
        {
          artifactId: 'participant-key',
          name: 'Participant key',
          description:
            'Your participant key for this space (shown once): send it as X-Private-Key to take part, over A2A, REST or MCP',
          parts: [{ kind: 'data', data: { participantId, participantPrivateKey: extra.key } }],
        },
      ]
    : undefined;
  return {
    kind: 'task',
    id: taskId,
    contextId: spaceId,
    status: {
      state,
      timestamp: new Date().toISOString(),
      ...(extra.reason
        ? {
            message: {
              kind: 'message',
              role: 'agent',
              messageId: `${participantId}:${state}`,
              contextId: spaceId,
              taskId,
              parts: [{ kind: 'text', text: extra.reason }],
            },
          }
        : {}),
    },
    ...(artifacts ? { artifacts } : {}),
    metadata: { spaceId, participantId, ...(extra.pollToken ? { pollToken: extra.pollToken } : {}) },
  };
}
