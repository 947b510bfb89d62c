// Wire contract of the human side: accounts, dashboard sessions, API tokens, the browser-link
// flow and key recovery.
import { z } from 'zod';
import { ZDateTime, ZName, ZUuid } from './common';

// --- Accounts (the built-in identity provider) -------------------------------------------------

export const passwordMin = 8;
/** scrypt copes with any length; the cap only keeps a request from costing more than it should. */
export const passwordMax = 1024;

export const ZEmail = z
  .string()
  .trim()
  .max(320)
  .pipe(z.email())
  .meta({ format: 'email', example: 'ada@example.com', description: 'case-insensitive' });

export const ZSignupRequest = z
  .object({
    email: ZEmail,
    password: z.string().min(passwordMin).max(passwordMax).meta({ description: 'at least 8 characters' }),
    name: ZName.optional(),
  })
  .meta({ id: 'SignupRequest' });
export type TSignupRequest = z.infer<typeof ZSignupRequest>;

export const ZLoginRequest = z
  .object({
    email: ZEmail,
    password: z.string().min(1).max(passwordMax),
  })
  .meta({ id: 'LoginRequest' });
export type TLoginRequest = z.infer<typeof ZLoginRequest>;

export const ZUserView = z
  .object({
    id: ZUuid,
    email: z.string(),
    name: z.string(),
    createdAt: ZDateTime,
  })
  .meta({ id: 'User' });
export type TUserView = z.infer<typeof ZUserView>;

export const ZSessionResult = z
  .object({
    token: z.string().meta({ description: 'The dashboard JWT: send it as `Authorization: Bearer <token>`' }),
    user: ZUserView,
    expiresAt: ZDateTime.meta({ description: 'When the dashboard JWT stops working; log in again then' }),
  })
  .meta({ id: 'SessionResult' });
export type TSessionResult = z.infer<typeof ZSessionResult>;

export const ZMySpace = z
  .object({
    spaceId: ZUuid,
    name: z.string(),
    state: z.enum(['open', 'closed']),
    role: z.enum(['owner', 'participant']),
    participantId: ZUuid,
    /** Additive: the participant record's status in that space. */
    status: z.enum(['waitingForApproval', 'active', 'muted', 'left', 'kicked']),
    createdAt: ZDateTime,
    ttlRemaining: z.number().int().nonnegative(),
  })
  .meta({ id: 'MySpace' });
export type TMySpace = z.infer<typeof ZMySpace>;

export const ZMySpaces = z.object({ spaces: z.array(ZMySpace) }).meta({ id: 'MySpaces' });
export type TMySpaces = z.infer<typeof ZMySpaces>;

// --- API tokens --------------------------------------------------------------------------------

export const ZCreateApiTokenRequest = z
  .object({ name: ZName.optional() })
  .meta({ id: 'CreateApiTokenRequest' });
export type TCreateApiTokenRequest = z.infer<typeof ZCreateApiTokenRequest>;

export const ZCreateApiTokenResult = z
  .object({
    id: ZUuid,
    name: z.string(),
    token: z.string().meta({ description: 'The `usr_` token; shown once only' }),
    prefix: z.string(),
    expiresAt: ZDateTime.optional().meta({ description: 'When the token stops working' }),
  })
  .meta({ id: 'CreateApiTokenResult' });
export type TCreateApiTokenResult = z.infer<typeof ZCreateApiTokenResult>;

export const ZTokenMetadata = z
  .object({
    id: ZUuid,
    name: z.string(),
    prefix: z.string(),
    createdAt: ZDateTime,
    lastUsedAt: ZDateTime.optional(),
    revoked: z.boolean(),
    expiresAt: ZDateTime.optional().meta({ description: 'When the token stops working (or stopped)' }),
  })
  .meta({ id: 'TokenMetadata' });
export type TTokenMetadata = z.infer<typeof ZTokenMetadata>;

export const ZTokenList = z.array(ZTokenMetadata);
export type TTokenList = z.infer<typeof ZTokenList>;

export const ZTokenIdParam = z.object({ tokenId: z.string().meta({ format: 'uuid' }) });
export type TTokenIdParam = z.infer<typeof ZTokenIdParam>;

// --- The browser-link flow (device-flow style, RFC 8628) ---------------------------------------

export const ZStartLinkRequest = z
  .object({
    agentName: ZName.optional().meta({ description: 'Shown to the human on the approval screen' }),
  })
  .meta({ id: 'StartLinkRequest' });
export type TStartLinkRequest = z.infer<typeof ZStartLinkRequest>;

export const ZStartLinkResult = z
  .object({
    deviceCode: z.string().meta({ description: 'Secret: poll with it; shown once, never put in a URL' }),
    verificationUri: z.string().meta({ format: 'uri' }),
    verificationUriComplete: z.string().meta({ format: 'uri' }),
    expiresIn: z.number().int().min(1),
    interval: z.number().int().min(1),
    /** Additive (RFC 8628 `user_code`): the code the human sees, `XXXX-XXXX`. */
    userCode: z.string(),
  })
  .meta({ id: 'StartLinkResult' });
export type TStartLinkResult = z.infer<typeof ZStartLinkResult>;

export const ZPollLinkRequest = z
  .object({ deviceCode: z.string().min(1).max(200) })
  .meta({ id: 'PollLinkRequest' });
export type TPollLinkRequest = z.infer<typeof ZPollLinkRequest>;

export const ZPollLinkResult = z
  .object({
    status: z.enum(['pending', 'denied', 'approved']),
    token: z.string().optional().meta({ description: 'The `usr_` token; only when approved, exactly once' }),
    prefix: z.string().optional(),
  })
  .meta({ id: 'PollLinkResult' });
export type TPollLinkResult = z.infer<typeof ZPollLinkResult>;

export const ZUserCodeRequest = z
  .object({
    userCode: z
      .string()
      .min(1)
      .max(32)
      .meta({ description: '`XXXX-XXXX`, with or without the dash, any case' }),
  })
  .meta({ id: 'UserCodeRequest' });
export type TUserCodeRequest = z.infer<typeof ZUserCodeRequest>;

export const ZLinkRequestView = z
  .object({
    agentName: z.string().nullable(),
    status: z.enum(['pending', 'approved', 'denied', 'consumed', 'expired']),
    expiresAt: ZDateTime,
  })
  .meta({ id: 'LinkRequest' });
export type TLinkRequestView = z.infer<typeof ZLinkRequestView>;

// --- Key recovery ------------------------------------------------------------------------------

export const ZMySpaceKey = z
  .object({
    role: z.enum(['owner', 'participant']),
    privateKey: z.string().meta({ description: 'The space key this human holds; send it as X-Private-Key' }),
  })
  .meta({ id: 'MySpaceKey' });
export type TMySpaceKey = z.infer<typeof ZMySpaceKey>;
