import { ConveneError } from '@convene/sdk';
import * as z from 'zod/mini';
import { CliError } from './errors';
import { Answer, FetchHeaders, httpFetch, NO_BODY } from './http-fetch';

/**
 * Whether an answer came from something that is not a Convene server (a web server, a proxy's
 * error page, another API): every answer of Convene, errors included, carries `API-Version`.
 */
export function isNotConvene(error: unknown): error is ConveneError {
  return error instanceof ConveneError && error.status !== undefined && !error.headers?.has('api-version');
}

/**
 * The fetch convene gives the SDK. A success without `API-Version` did not come from Convene (a
 * mistyped address where another API answers `200 {}`, a webhook receiver's empty 200): its body
 * is not handed on, lest it be taken for Convene's answer and saved (a space keyed `undefined`, a
 * join "pending" without its participant), nor read as one (an empty body is no answer of an
 * operation). It is passed on with its status and headers, without its body and content type, so
 * the SDK fails it as "not JSON" (or not the text or stream asked for), which `isNotConvene` then
 * tells by the missing header, as it tells a web page's 200.
 */
export const conveneFetch: typeof fetch = async (input, init) => {
  const response = await httpFetch(input, init);
  if (!response.ok || response.headers.has('api-version') || NO_BODY.has(response.status)) return response;
  void response.body?.cancel().catch(() => {});
  const headers = new FetchHeaders(response.headers);
  headers.delete('content-type');
  return Answer.of('not an answer of Convene (no API-Version header)', {
    status: response.status,
    statusText: response.statusText,
    headers,
    url: response.url,
    redirected: response.redirected,
  }).asResponse();
};

/** What a reverse proxy answers for the server behind it while that server is away (nginx's 502, 503, 504). */
export const PROXY_AWAY = new Set([502, 503, 504]);

/**
 * An answer that is not Convene's: its status, not its body (an HTML page as the error says
 * nothing), and where to look: the address, or a proxy in front of Convene for a 502, 503 or 504 (and
 * `convene doctor`, unless that is what is asking).
 */
export function notConvene(
  error: ConveneError,
  server: string,
  { fromDoctor = false }: { fromDoctor?: boolean } = {},
): CliError {
  return new CliError(
    `the server at ${server} answered HTTP ${error.status} but is not a Convene server (or not this API version)`,
    {
      hint: `${
        error.status !== undefined && PROXY_AWAY.has(error.status)
          ? 'A proxy in front of Convene answers so while Convene is down; else check'
          : 'Check'
      } the address (--url or CONVENE_URL)${fromDoctor ? '' : '; `convene doctor` checks the server'}.`,
      details: { status: error.status },
      cause: error,
    },
  );
}

/** An id as the contract gives them (format uuid): it goes into the paths of later requests. */
const ZId = z.string().check(z.regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i));
/** A key, token or name the server handed out: a string with something in it. */
const ZGiven = z.string().check(z.minLength(1));

/**
 * The fields of a server's answers that convene saves, as the contract shapes them: checked before
 * anything is saved, since a file holding what the strict reader refuses would lock every saved
 * key out (and `conveneFetch` only catches an answer without Convene's header).
 */
export const ZAnswers = {
  /** createSpace's result (CreateSpaceResult). */
  createdSpace: z.object({ spaceId: ZId, ownerId: ZId, ownerPrivateKey: ZGiven }),
  /** A join: its participant and key (JoinActive, JoinApproved), and the space as read (SpaceView). */
  joined: z.object({ participantId: ZId, key: ZGiven, spaceId: ZId, name: z.string() }),
  /** A join waiting for approval (JoinPending). */
  pendingJoin: z.object({ participantId: ZId, pollToken: z.optional(ZGiven) }),
  /** A recovered key (getMySpaceKey) and the space it opens (SpaceView). */
  recoveredKey: z.object({ role: z.enum(['owner', 'participant']), privateKey: ZGiven }),
  /** A space as read (SpaceView): the name kept with its key. */
  spaceName: z.object({ name: z.string() }),
  /** A space as read with a key given (SpaceView): whose key it is, and the name kept with it. */
  keyHolder: z.object({
    name: z.string(),
    you: z.union([
      z.object({
        role: z.enum(['owner', 'participant']),
        participantId: ZId,
        status: z.optional(z.string()),
      }),
      z.object({ role: z.literal('invitation') }),
    ]),
  }),
  /** A password login or a signup (AuthSession). */
  session: z.object({
    token: ZGiven,
    expiresAt: ZGiven,
    user: z.object({ id: ZGiven, email: z.string(), name: z.string() }),
  }),
  /** The browser link's start (StartLinkResult): what is shown, and how often it is polled. */
  linkStarted: z.object({
    deviceCode: ZGiven,
    userCode: ZGiven,
    verificationUri: ZGiven,
    verificationUriComplete: ZGiven,
    expiresIn: z.number().check(z.minimum(1)),
    interval: z.number().check(z.minimum(1)),
  }),
  /** A `usr_` token handed out (the browser link's, or one minted). */
  userToken: z.string().check(z.regex(/^usr_\S+$/)),
} as const;

/**
 * `value`, an answer of the server at `server`, if it has the fields `schema` names; else the
 * server is named as not a Convene server (the fields it lacks said, for whoever debugs it), and
 * nothing is saved.
 */
export function checkedAnswer<T>(schema: z.ZodMiniType<T>, value: unknown, server: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const fields = [...new Set(result.error.issues.map((issue) => issue.path.join('.') || 'its body'))];
  throw new CliError(
    `the server at ${server} answered, but not as a Convene server does (or not this API version): ${fields.join(', ')} missing or malformed`,
    {
      hint: 'Nothing was saved. Check the address (--url or CONVENE_URL); `convene doctor` checks the server.',
    },
  );
}
