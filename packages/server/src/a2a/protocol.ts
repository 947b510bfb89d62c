import { z } from 'zod';

/** The A2A version spoken: JSON-RPC methods `message/send`, `message/stream`, `tasks/*`. */
export const A2A_PROTOCOL_VERSION = '0.3.0';

const ZMetadata = z.record(z.string(), z.unknown());

const ZPart = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('text'), text: z.string(), metadata: ZMetadata.optional() }),
  z.object({
    kind: z.literal('file'),
    file: z.object({
      uri: z.string().optional(),
      bytes: z.string().optional(),
      mimeType: z.string().optional(),
      name: z.string().optional(),
    }),
    metadata: ZMetadata.optional(),
  }),
  z.object({ kind: z.literal('data'), data: ZMetadata, metadata: ZMetadata.optional() }),
]);
export type A2APart = z.infer<typeof ZPart>;

/** A message as an A2A client sends it (unknown fields are ignored). */
export const ZA2AMessage = z.object({
  kind: z.literal('message').optional(),
  role: z.enum(['user', 'agent']),
  messageId: z.string().min(1).max(200),
  parts: z.array(ZPart).min(1).max(100),
  contextId: z.string().optional(),
  taskId: z.string().optional(),
  referenceTaskIds: z.array(z.string()).optional(),
  metadata: ZMetadata.optional(),
});
export type A2AMessageIn = z.infer<typeof ZA2AMessage>;

export const ZMessageSendParams = z.object({
  message: ZA2AMessage,
  configuration: z
    .object({
      blocking: z.boolean().optional(),
      historyLength: z.number().int().min(0).optional(),
    })
    .optional(),
  metadata: ZMetadata.optional(),
});
export type MessageSendParams = z.infer<typeof ZMessageSendParams>;

export const ZTaskQueryParams = z.object({
  id: z.string().min(1),
  historyLength: z.number().int().min(0).optional(),
  metadata: ZMetadata.optional(),
});
export type TaskQueryParams = z.infer<typeof ZTaskQueryParams>;

export const ZJsonRpcRequest = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number(), z.null()]).optional(),
  method: z.string(),
  // A2A's params are by name: an object (the documented request schema says the same).
  params: z.record(z.string(), z.unknown()).optional(),
});

export type TaskState = 'submitted' | 'working' | 'completed' | 'rejected';

/** What this service sends: an A2A Message of the space (role agent) or the caller's (role user). */
export interface A2AMessage {
  kind: 'message';
  role: 'user' | 'agent';
  messageId: string;
  contextId: string;
  taskId?: string;
  parts: (
    | { kind: 'text'; text: string }
    | { kind: 'file'; file: { uri: string; mimeType?: string } }
    | { kind: 'data'; data: Record<string, unknown> }
  )[];
  metadata?: Record<string, unknown>;
}

export interface A2AArtifact {
  artifactId: string;
  name: string;
  description?: string;
  parts: { kind: 'data'; data: Record<string, unknown> }[];
}

export interface A2ATask {
  kind: 'task';
  id: string;
  contextId: string;
  status: { state: TaskState; timestamp: string; message?: A2AMessage };
  history?: A2AMessage[];
  artifacts?: A2AArtifact[];
  metadata?: Record<string, unknown>;
}

export interface A2AStatusUpdate {
  kind: 'status-update';
  taskId: string;
  contextId: string;
  status: A2ATask['status'];
  final: boolean;
}

/** JSON-RPC and A2A error codes. */
export const A2A_ERRORS = {
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
  taskNotFound: -32001,
  taskNotCancelable: -32002,
  unsupportedOperation: -32004,
  /** Any other refusal of the service: `data` carries the REST status and error. */
  refused: -32000,
} as const;

export class A2AError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
  }
}
