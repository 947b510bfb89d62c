import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { Api } from './api';

/** A human with a built-in account and a live dashboard session. */
export interface HumanFixture {
  id: string;
  email: string;
  password: string;
  /** The dashboard JWT. */
  jwt: string;
  /** `{ Authorization: Bearer <jwt> }`, ready to spread into a request's headers. */
  auth: Record<string, string>;
}

export interface TokenFixture {
  id: string;
  name: string;
  token: string;
  prefix: string;
  /** When the token stops working (USER_TOKEN_TTL_S after it was minted). */
  expiresAt: string;
}

export const bearer = (jwt: string): Record<string, string> => ({ Authorization: `Bearer ${jwt}` });

/** A fresh account (unique email each call), through the real signup route. */
export async function signup(
  api: Api,
  overrides: { email?: string; password?: string; name?: string } = {},
): Promise<HumanFixture> {
  const email = overrides.email ?? `human-${randomBytes(6).toString('hex')}@example.com`;
  const password = overrides.password ?? `pw-${randomBytes(8).toString('hex')}`;
  const res = await api.post('/hub/auth/signup', {
    body: { email, password, ...(overrides.name !== undefined ? { name: overrides.name } : {}) },
  });
  expect(res.status, res.text).toBe(201);
  return { id: res.body.user.id, email, password, jwt: res.body.token, auth: bearer(res.body.token) };
}

/** A `usr_` token minted on the dashboard. */
export async function mintToken(api: Api, human: HumanFixture, name?: string): Promise<TokenFixture> {
  const res = await api.post('/hub/me/tokens', {
    headers: human.auth,
    body: name === undefined ? {} : { name },
  });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

export interface LinkFixture {
  deviceCode: string;
  userCode: string;
  verificationUriComplete: string;
}

export async function startLink(api: Api, agentName?: string): Promise<LinkFixture> {
  const res = await api.post('/hub/link/start', { body: agentName === undefined ? {} : { agentName } });
  expect(res.status, res.text).toBe(200);
  const userCode = new URL(res.body.verificationUriComplete).searchParams.get('code');
  expect(userCode).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
  return {
    deviceCode: res.body.deviceCode,
    userCode: userCode as string,
    verificationUriComplete: res.body.verificationUriComplete,
  };
}

/** A link request the human has approved, its token not yet collected by a poll. */
export async function approvedLink(api: Api, human: HumanFixture, agentName?: string): Promise<LinkFixture> {
  const link = await startLink(api, agentName);
  const approve = await api.post('/hub/me/link/approve', {
    headers: human.auth,
    body: { userCode: link.userCode },
  });
  expect(approve.status, approve.text).toBe(200);
  return link;
}

/** The whole browser-link flow: start, the human approves, the agent's poll collects the token. */
export async function linkAgent(api: Api, human: HumanFixture, agentName = 'Test agent'): Promise<string> {
  const link = await approvedLink(api, human, agentName);
  const poll = await api.post('/hub/link/poll', { body: { deviceCode: link.deviceCode } });
  expect(poll.status, poll.text).toBe(200);
  expect(poll.body.status).toBe('approved');
  return poll.body.token;
}
