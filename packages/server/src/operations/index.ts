import { a2aOperations } from './a2a';
import { accountOperations } from './account';
import { agentOperations } from './agents';
import { artifactOperations } from './artifacts';
import type { Declaration } from './declare';
import { discoveryOperations } from './discovery';
import { linkingOperations } from './linking';
import { messageOperations } from './messages';
import { metaOperations } from './meta';
import { participantOperations } from './participants';
import { spaceOperations } from './spaces';
import { webOperations } from './web';
import { webhookOperations } from './webhooks';

/**
 * Every operation and route of the service, declared once. The tRPC router (and through
 * trpc-to-openapi the REST API and its OpenAPI document), the MCP tools and the raw route table
 * are all derived from this list (src/api.ts); adding an operation is one entry in its domain's
 * file, plus its use case in core.
 */
export const declarations: readonly Declaration[] = [
  ...metaOperations,
  ...spaceOperations,
  ...participantOperations,
  ...messageOperations,
  ...webhookOperations,
  ...artifactOperations,
  ...linkingOperations,
  ...accountOperations,
  ...agentOperations,
  ...a2aOperations,
  ...discoveryOperations,
  ...webOperations,
];
