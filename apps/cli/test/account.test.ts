import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { eventually, follow } from './helpers/cli';
import { bundle } from './helpers/paths';
import { scriptedProxy } from './helpers/proxy';
import { serverForFile, type TestServer } from './helpers/server';
import { answered, Terminal } from './helpers/tmux';

const file = serverForFile();
const user = () => file.user();
let server: TestServer;
beforeAll(() => {
  server = file.server;
});

/** A human with an account, as the browser's signup page makes one. */
async function signup(): Promise<{ email: string; password: string; jwt: string }> {
  const email = `ada-${randomUUID()}@example.com`;
  const password = 'correct horse battery';
  const response = await fetch(`${server.url}/hub/auth/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password, name: 'Ada' }),
  });
  expect(response.status).toBe(201);
  return { email, password, jwt: ((await response.json()) as any).token };
}

async function asHuman(jwt: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${jwt}` },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return {
    status: response.status,
    body: response.status === 204 ? undefined : ((await response.json()) as any),
  };
}

describe('login through the browser link', () => {
  it('prints the URL and code, waits for the approval, keeps the token; new spaces reach the dashboard', async () => {
    const human = await signup();
    const agent = user();
    const login = follow(agent, ['login']);
    const [, code, link] = await login.waitFor(/approve the code (\w{4}-\w{4}):\s*\n\s*(http\S+)/);
    expect(link).toContain(`${server.url}/link?code=`);
    expect((await asHuman(human.jwt, 'POST', '/hub/me/link/approve', { userCode: code })).status).toBe(200);
    const result = await login.done;
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`Logged in to ${server.url}`);
    expect(agent.credentials().hosts[server.url].userToken).toMatch(/^usr_/);

    const { spaceId } = (await agent.run(['space', 'create', 'Linked', '--json'])).json();
    const mine = await asHuman(human.jwt, 'GET', '/hub/me/spaces');
    expect(mine.body.spaces.map((s: any) => s.spaceId)).toContain(spaceId);

    // Another machine with the same token recovers the owner key by the space's id.
    const elsewhere = user();
    const token = agent.credentials().hosts[server.url].userToken;
    expect((await elsewhere.run(['login', '--with-token'], { input: token })).code).toBe(0);
    // A machine that cannot save the recovered key says so, as any save refused: the key is not
    // shown, since the account recovers it again.
    const jammed = user();
    expect((await jammed.run(['login', '--with-token'], { input: token })).code).toBe(0);
    const lock = join(jammed.env.XDG_CONFIG_HOME!, 'convene/credentials.json.lock');
    mkdirSync(lock);
    utimesSync(lock, new Date(0), new Date(0));
    const refused = await jammed.run(['space', 'use', spaceId]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('could not save');
    expect(refused.stderr).not.toMatch(/created space|copy it now|bug in convene/);
    const recovered = await elsewhere.run(['space', 'use', spaceId, '--json']);
    expect(recovered.code).toBe(0);
    expect(recovered.json()).toMatchObject({ spaceId, name: 'Linked', role: 'owner' });
    expect(elsewhere.credentials().hosts[server.url].spaces[spaceId]).toMatchObject({
      role: 'owner',
      name: 'Linked',
    });
    expect((await elsewhere.run(['invite', '-q'])).stdout).toContain(`/join/${spaceId}`);
    // A whole id the account holds no key for is 4, as any whole space id without a key is: the
    // space may exist, and what is missing is a key.
    const unknown = await elsewhere.run(['space', 'use', randomUUID()]);
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toContain('your account holds no key for space');
    expect(unknown.stderr).toContain('convene join LINK');
    // A key the account held in a space that is over: why, no join to suggest, and exit 6, as a
    // closed space is for every command.
    expect((await agent.run(['space', 'close', spaceId, '--yes'])).code).toBe(0);
    const third = user();
    expect((await third.run(['login', '--with-token'], { input: token })).code).toBe(0);
    const over = await third.run(['space', 'use', spaceId]);
    expect(over.code).toBe(6);
    expect(over.stderr).toContain(
      `your account holds no working key for space ${spaceId}: the space is closed, and its keys no longer work`,
    );
    expect(over.stderr).not.toContain('convene join');

    // With --json the flow is NDJSON: how to approve, then the result.
    const again = follow(agent, ['login', '--json']);
    const { userCode } = JSON.parse((await again.waitFor(/^.*\n/))[0]);
    expect((await asHuman(human.jwt, 'POST', '/hub/me/link/approve', { userCode })).status).toBe(200);
    const relink = await again.done;
    expect(relink.code).toBe(0);
    const records = relink.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(records).toEqual([
      expect.objectContaining({ userCode, verificationUriComplete: expect.stringContaining(userCode) }),
      {
        url: server.url,
        prefix: expect.stringMatching(/^usr_/),
        // The token the first link minted is replaced; revoking it takes a session this terminal lacks.
        replacedToken: {
          prefix: expect.stringMatching(/^usr_/),
          revoked: false,
          problem: expect.stringContaining('convene login --password'),
        },
      },
    ]);

    const who = await agent.run(['whoami', '--json']);
    expect(who.code).toBe(0);
    expect(who.json()).toMatchObject({
      url: server.url,
      userToken: { source: 'saved' },
      defaultSpace: { spaceId, role: 'owner' },
    });

    // Revoking takes the dashboard session, which the browser link does not give: said, not hidden.
    const out = await agent.run(['logout']);
    expect(out.code).toBe(0);
    expect(out.stderr).toContain('could not revoke the token');
    expect(out.stderr).toContain('convene login --password');
    expect(agent.credentials().hosts[server.url].userToken).toBeUndefined();
  });

  it('stops with exit 4 when the request is refused in the browser', async () => {
    const human = await signup();
    const agent = user();
    const login = follow(agent, ['login', '--json']);
    const started = JSON.parse((await login.waitFor(/^.*\n/))[0]);
    expect(started).toMatchObject({
      userCode: expect.any(String),
      verificationUriComplete: expect.stringContaining('/link?code='),
    });
    expect(
      (await asHuman(human.jwt, 'POST', '/hub/me/link/deny', { userCode: started.userCode })).status,
    ).toBe(200);
    const result = await login.done;
    expect(result.code).toBe(4);
    expect(JSON.parse(result.stderr).error).toMatch(/refused|denied/);
  });
});

/** `convene login` through the browser link, approved by the human as soon as the code shows. */
async function browserLogin(terminal: ReturnType<typeof user>, jwt: string, args: string[] = []) {
  const login = follow(terminal, ['login', ...args]);
  const [, userCode] = await login.waitFor(/\b(\w{4}-\w{4})\b/);
  expect((await asHuman(jwt, 'POST', '/hub/me/link/approve', { userCode })).status).toBe(200);
  return login.done;
}

describe('a login that replaces the saved token', () => {
  it('revokes the token convene minted before (not one given with --with-token), and says when it cannot', async () => {
    const human = await signup();
    const someone = user();
    const saved = () => someone.credentials().hosts[server.url];
    const works = async (token: string) =>
      (await user().run(['whoami'], { env: { CONVENE_TOKEN: token } })).code === 0;
    const password = () =>
      someone.run(['login', '--password', '--email', human.email], { input: human.password });
    const loggedIn = await password();
    expect(loggedIn.code).toBe(0);
    // Its end as other times are shown (12 h on: today's time of day, or tomorrow's date and time), not in a locale's format.
    expect(loggedIn.stderr).toMatch(
      /\(session until (\d{2}:\d{2}:\d{2}|\d{4}-\d{2}-\d{2} \d{2}:\d{2}), in 12 h\)/,
    );
    const first = saved().userToken;
    // A second password login keeps the token it minted: it replaces nothing.
    expect((await password()).code).toBe(0);
    expect(saved().userToken).toBe(first);

    // The browser link replaces it: the old one is revoked with the session (it stayed valid).
    const relinked = await browserLogin(someone, human.jwt);
    expect(relinked.code).toBe(0);
    expect(relinked.stderr).toContain(`Revoked the token ${first.slice(0, 8)}… it replaces on the server`);
    const second = saved().userToken;
    expect(second).not.toBe(first);
    expect(await works(first)).toBe(false);
    expect(await works(second)).toBe(true);

    // --with-token replacing a minted token revokes it too.
    const given = (await someone.run(['token', 'create', 'CI bot', '-q'])).stdout.trim();
    const withToken = await someone.run(['login', '--with-token', '--json'], { input: `${given}\n` });
    expect(withToken.code).toBe(0);
    expect(withToken.json()).toEqual({
      url: server.url,
      prefix: given.slice(0, 8),
      replacedToken: { prefix: second.slice(0, 8), revoked: true },
    });
    expect(await works(second)).toBe(false);

    // A token given with --with-token may be in use elsewhere: replaced, it is not revoked.
    const again = await browserLogin(someone, human.jwt);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain(`replaces the token ${given.slice(0, 8)}…, given with --with-token`);
    expect(await works(given)).toBe(true);
    const third = saved().userToken;
    // The same token given again replaces nothing and stays convene’s to revoke at logout.
    const same = await someone.run(['login', '--with-token', '--json'], { input: `${third}\n` });
    expect(same.json()).toEqual({ url: server.url, prefix: third.slice(0, 8) });
    expect(saved().userTokenMinted).toBe(true);
    expect(await works(third)).toBe(true);

    // Without a session nothing can revoke it: the new token is saved all the same, and it says so.
    const credentials = someone.credentials();
    delete credentials.hosts[server.url].session;
    writeFileSync(
      join(someone.env.XDG_CONFIG_HOME!, 'convene/credentials.json'),
      JSON.stringify(credentials),
    );
    const unrevoked = await browserLogin(someone, human.jwt);
    expect(unrevoked.code).toBe(0);
    expect(unrevoked.stderr).toContain(
      `Saved the new token, but could not revoke the token ${third.slice(0, 8)}… it replaces on the server`,
    );
    expect(unrevoked.stderr).toContain('convene login --password');
    expect(saved().userToken).not.toBe(third);
    expect(await works(saved().userToken)).toBe(true);
  });
});

/** A human with an account and a `usr_` token minted for them, and the terminal that minted it. */
async function withToken(name = 'CI bot') {
  const human = await signup();
  const terminal = user();
  const login = await terminal.run(['login', '--password', '--email', human.email], {
    input: human.password,
  });
  expect(login.code).toBe(0);
  const token = (await terminal.run(['token', 'create', name, '-q'])).stdout.trim();
  expect(token).toMatch(/^usr_/);
  return { human, terminal, token };
}

describe('whoami with space keys alone', () => {
  it('shows the server, the default space and who you are in it, not logged in as information, exit 0', async () => {
    const owner = user();
    expect((await owner.run(['space', 'create', 'Keys only'])).code).toBe(0);
    const { humanLink } = (await owner.run(['invite', '--json'])).json();
    const guest = user();
    const joined = await guest.run(['join', humanLink, '--name', 'Ada', '--role', 'reviewer', '--human']);
    expect(joined.code).toBe(0);

    const who = await guest.run(['whoami']);
    expect(who.code).toBe(0);
    expect(who.stderr).toBe('');
    expect(who.stdout).toMatch(new RegExp(`server\\s+${server.url}\n`));
    expect(who.stdout).toMatch(/account\s+none: not logged in \(spaces work without an account;/);
    expect(who.stdout).toMatch(/space\s+Keys only \(participant, default\)\n/);
    expect(who.stdout).toMatch(/you are\s+Ada, a human, role reviewer\n/);
    // The owner, never logged in either: the server's defaults, as `space create` says them.
    const mine = await owner.run(['whoami']);
    expect(mine.code).toBe(0);
    expect(mine.stdout).toMatch(/you are\s+Owner, an agent, role owner\n/);

    // --json: the same, under defaultSpace, as the server has it; every field the README lists is
    // there, null when there is none (not logged in: no user, session or token), so a script reads
    // one shape.
    const json = await guest.run(['whoami', '--json']);
    expect(json.code).toBe(0);
    const { participantId } = Object.values(guest.credentials().hosts[server.url].spaces)[0] as any;
    expect(json.json()).toEqual({
      url: server.url,
      user: null,
      session: null,
      userToken: null,
      defaultSpace: {
        spaceId: expect.any(String),
        name: 'Keys only',
        role: 'participant',
        participantId,
        state: 'open',
        participant: { name: 'Ada', role: 'reviewer', isHuman: true, isOwner: false, status: 'active' },
      },
      spaces: 1,
    });
    // -q: not logged in, who you are in the default space.
    expect((await guest.run(['whoami', '-q'])).stdout).toBe(`${participantId}\n`);

    // Muted: said beside the name. Removed: the key refused, still shown, still exit 0.
    expect((await owner.run(['mute', 'Ada'])).code).toBe(0);
    expect((await guest.run(['whoami'])).stdout).toMatch(/you are\s+Ada, a human, role reviewer, muted\n/);
    // doctor says it too: the key works, for reading.
    expect((await guest.run(['doctor'])).stdout).toContain(
      'your participant key works (muted by the owner: you read, and cannot send, create documents or take locks)',
    );
    expect((await owner.run(['kick', 'Ada', '--yes'])).code).toBe(0);
    const removed = await guest.run(['whoami', '--json']);
    expect(removed.code).toBe(0);
    expect(removed.json().defaultSpace).toMatchObject({ state: 'keyRefused' });
    expect(removed.json().defaultSpace.participant).toBeNull();
    expect((await guest.run(['whoami'])).stdout).toMatch(
      /space\s+Keys only \(participant, default; its key is refused: the owner removed you\)\n/,
    );

    // Its server away: what is saved here, the space not checked, exit 0, without a wait.
    const relay = await scriptedProxy(server.url, /^$/);
    const away = file.user({ url: relay.url });
    expect((await away.run(['space', 'create', 'Away'])).code).toBe(0);
    await relay.close();
    const offline = await away.run(['whoami', '--json'], { timeoutMs: 20_000 });
    expect(offline.code).toBe(0);
    expect(offline.json().defaultSpace).toMatchObject({ name: 'Away', role: 'owner', state: 'unavailable' });
    expect((await away.run(['whoami'])).stdout).toMatch(
      /space\s+Away \(owner, default; not checked: no answer\)\n/,
    );

    // Nothing at all (no account, no keys): nobody to show, exit 4.
    const nobody = await user().run(['whoami']);
    expect(nobody.code).toBe(4);
    expect(nobody.stderr).toContain(`not logged in to ${server.url}, and no space keys for it here`);
    expect(nobody.stderr).toContain('`convene join LINK`');
    // Its --json has the same shape, every field null but the server and the count.
    expect((await user().run(['whoami', '--json'])).json()).toEqual({
      url: server.url,
      user: null,
      session: null,
      userToken: null,
      defaultSpace: null,
      spaces: 0,
    });
    // Keys for another server only: those are named, not "join or create" (a trial read "no space
    // keys here" as its keys lost).
    const elsewhere = await away.run(['--url', server.url, 'whoami']);
    expect(elsewhere.code).toBe(4);
    expect(elsewhere.stderr).toContain(
      `Keys are saved for another server: ${new URL(relay.url).origin} (1 space). Add \`--url ${new URL(relay.url).origin}\``,
    );
    expect(elsewhere.stderr).not.toContain('`convene join LINK`');
    // A space named, by name or id, whose key is saved for that other server: said so.
    const origin = new URL(relay.url).origin;
    const byName = await away.run(['--url', server.url, 'messages', 'Away']);
    expect(byName.code).toBe(5);
    expect(byName.stderr).toContain(
      `Your key for it is saved for another server, ${origin}: add \`--url ${origin}\` (or set CONVENE_URL=${origin}).`,
    );
    const awayId = Object.keys(away.credentials().hosts[origin].spaces)[0]!;
    const byId = await away.run(['--url', server.url, 'space', 'use', awayId]);
    expect(byId.code).toBe(4);
    expect(byId.stderr).toContain(`Your key for it is saved for another server, ${origin}`);
    // By the start of its id, as spaces are named here.
    const byStart = await away.run(['--url', server.url, 'messages', awayId.slice(0, 8)]);
    expect(byStart.code).toBe(5);
    expect(byStart.stderr).toContain(`Your key for it is saved for another server, ${origin}`);
  });
});

describe('whoami with a token', () => {
  it('checks a CONVENE_TOKEN with the server: valid is exit 0 and says so; one that does not work is exit 4', async () => {
    const { human, terminal, token } = await withToken();
    const agent = user();
    const valid = await agent.run(['whoami'], { env: { CONVENE_TOKEN: token } });
    expect(valid.code).toBe(0);
    expect(valid.stdout).toMatch(/token\s+usr_\S+… \(from CONVENE_TOKEN\), valid/);
    expect(valid.stdout).not.toContain('account  none');
    const json = await agent.run(['whoami', '--json'], { env: { CONVENE_TOKEN: token } });
    expect(json.code).toBe(0);
    expect(json.json().userToken).toEqual({
      prefix: token.slice(0, 8),
      source: 'CONVENE_TOKEN',
      valid: true,
    });

    // Where the dashboard session knows the token, whoami names it and its account.
    const mine = await terminal.run(['whoami'], { env: { CONVENE_TOKEN: token } });
    expect(mine.code).toBe(0);
    expect(mine.stdout).toContain(`"CI bot" of ${human.email}`);

    const bogus = await agent.run(['whoami'], { env: { CONVENE_TOKEN: 'usr_not-a-real-one' } });
    expect(bogus.code).toBe(4);
    expect(bogus.stdout).toMatch(/token\s+usr_not-… \(from CONVENE_TOKEN\), not valid/);
    expect(bogus.stderr).toContain('the token in CONVENE_TOKEN does not work');
    // Not logged in with a password, `token create` alone would fail too (exit 4): what gets there.
    const tokenCreate = await agent.run(['token', 'create']);
    expect(tokenCreate.code).toBe(4);
    expect(bogus.stderr).not.toContain('Mint a new one');
    expect(bogus.stderr).toContain('`convene login --password`, then `convene token create` mints one');
    // With the dashboard session, `token create` is the way.
    const withSession = await terminal.run(['whoami'], { env: { CONVENE_TOKEN: 'usr_not-a-real-one' } });
    expect(withSession.code).toBe(0);
    expect(withSession.stderr).toContain('Mint a new one (`convene token create`');
    // doctor checks it the same way.
    const doctor = await agent.run(['doctor', '--json'], { env: { CONVENE_TOKEN: 'usr_not-a-real-one' } });
    expect(doctor.code).toBe(1);
    expect(doctor.json().checks).toContainEqual(
      expect.objectContaining({
        name: 'token',
        status: 'fail',
        hint: expect.stringContaining('`convene login --password`, then `convene token create`'),
      }),
    );
    const healthy = await agent.run(['doctor', '--json'], { env: { CONVENE_TOKEN: token } });
    expect(healthy.json().checks).toContainEqual(expect.objectContaining({ name: 'token', status: 'ok' }));
  });
});

describe('a token the server does not take, sent with a create or a join', () => {
  it('is said: the server ignores it, so the space or the membership is not on the dashboard', async () => {
    const { token } = await withToken();
    const bogus = { CONVENE_TOKEN: 'usr_not-a-real-one' };
    const owner = user();
    const created = await owner.run(['space', 'create', 'Unlinked'], { env: bogus });
    expect(created.code).toBe(0);
    expect(created.stderr).toContain(
      `! ${server.url} does not accept the token in CONVENE_TOKEN: this space is not linked to your dashboard`,
    );
    const { humanLink } = (await owner.run(['invite', '--json'])).json();
    const joined = await user().run(['join', humanLink, '--name', 'Jo'], { env: bogus });
    expect(joined.code).toBe(0);
    expect(joined.stderr).toContain('this membership is not linked to your dashboard');
    // A token that works, or none, says nothing of it.
    const linked = await user().run(['space', 'create', 'Linked'], { env: { CONVENE_TOKEN: token } });
    expect(linked.stderr).not.toContain('dashboard');
    expect((await user().run(['space', 'create', 'Plain'])).stderr).not.toContain('dashboard');
  });
});

describe('a password login as another account', () => {
  it('replaces the saved token of the account before with one of its own, and leaves that one alone', async () => {
    const [ada, grace] = [await signup(), await signup()];
    const someone = user();
    const saved = () => someone.credentials().hosts[server.url].userToken as string;
    const works = async (token: string) =>
      (await user().run(['whoami'], { env: { CONVENE_TOKEN: token } })).code === 0;
    const tokensOf = async (jwt: string) =>
      ((await asHuman(jwt, 'GET', '/hub/me/tokens')).body as { prefix: string }[]).map((t) => t.prefix);
    const asAda = await someone.run(['login', '--password', '--email', ada.email], { input: ada.password });
    expect(asAda.code).toBe(0);
    const adas = saved();
    const asGrace = await someone.run(['login', '--password', '--email', grace.email, '--json'], {
      input: grace.password,
    });
    expect(asGrace.code).toBe(0);
    const graces = saved();
    expect(graces).not.toBe(adas);
    expect(asGrace.json()).toMatchObject({
      user: { email: grace.email },
      tokenPrefix: graces.slice(0, 8),
      replacedToken: { prefix: adas.slice(0, 8), revoked: false },
    });
    // New spaces now reach Grace's dashboard; Ada's token is still Ada's to revoke.
    expect(await tokensOf(grace.jwt)).toContain(graces.slice(0, 8));
    expect(await tokensOf(ada.jwt)).not.toContain(graces.slice(0, 8));
    expect(await works(graces)).toBe(true);
    expect(await works(adas)).toBe(true);
    // Logging in as Grace again keeps her token.
    expect(
      (await someone.run(['login', '--password', '--email', grace.email], { input: grace.password })).code,
    ).toBe(0);
    expect(saved()).toBe(graces);
  });
});

describe('signup', () => {
  it('creates the account login --password takes, keeps its session and mints a token; a taken email is exit 6', async () => {
    const email = `grace-${randomUUID()}@example.com`;
    const password = 'correct horse battery';
    const newcomer = user();
    const wrong = await newcomer.run(['login', '--password', '--email', email], { input: password });
    expect(wrong.code).toBe(4);
    expect(wrong.stderr).toContain('create an account with `convene signup`');

    const signed = await newcomer.run(['signup', '--email', email, '--name', 'Grace', '--json'], {
      input: password,
    });
    expect(signed.code).toBe(0);
    expect(signed.json()).toMatchObject({ user: { email, name: 'Grace' }, tokenPrefix: expect.any(String) });
    const saved = newcomer.credentials().hosts[server.url];
    expect(saved.session.user.email).toBe(email);
    expect(saved.userToken).toMatch(/^usr_/);
    expect((await newcomer.run(['whoami', '-q'])).stdout.trim()).toBe(email);
    expect((await newcomer.run(['token', 'list', '--json'])).json()).toHaveLength(1);
    // The account works for a password login elsewhere.
    expect((await user().run(['login', '--password', '--email', email], { input: password })).code).toBe(0);

    const taken = await user().run(['signup', '--email', email], { input: password });
    expect(taken.code).toBe(6);
    expect(taken.stderr).toContain('already exists');
    expect(taken.stderr).toContain(`convene login --password --email ${email}`);
    const short = await user().run(['signup', '--email', `x-${email}`], { input: 'short' });
    expect(short.code).toBe(2);
    expect(short.stderr).toContain('the password is too short: at least 8 characters');
    expect(short.stderr).toContain('Pick a longer one');
    // Nothing piped: the line to pipe it into is this one, with the email given.
    const none = await user().run(['signup', '--email', `y-${email}`], { input: '' });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no password given');
    expect(none.stderr).toContain(`| convene signup --email y-${email}`);
  });
});

describe('signup on a terminal', () => {
  it('asks again for a password shorter than 8 characters, keeping the email typed', async () => {
    const email = `short-${randomUUID()}@example.com`;
    const newcomer = user();
    const terminal = new Terminal([process.execPath, bundle, 'signup'], newcomer.env, newcomer.home);
    try {
      await eventually(() => expect(terminal.screen()).toContain('Email'));
      terminal.press('-l', email);
      terminal.press('Enter');
      await eventually(() => expect(terminal.screen()).toContain('Password'));
      terminal.press('-l', 'short');
      terminal.press('Enter');
      await eventually(() => expect(terminal.screen()).toContain('at least 8 characters'));
      expect(terminal.screen()).not.toMatch(/EXIT=\d+/);
      terminal.press('-l', ' enough');
      terminal.press('Enter');
      await eventually(() => expect(terminal.screen()).toContain('Password again'));
      terminal.press('-l', 'short enough');
      terminal.press('Enter');
      await eventually(() => expect(terminal.screen()).toMatch(/EXIT=\d+/));
      expect(terminal.screen()).toContain('EXIT=0');
    } finally {
      terminal.close();
    }
    expect(newcomer.credentials().hosts[server.url].session.user.email).toBe(email);
  });

  it('asks for the password twice, and for both again while they differ', async () => {
    const email = `twice-${randomUUID()}@example.com`;
    const newcomer = user();
    const terminal = new Terminal(
      [process.execPath, bundle, 'signup', '--email', email],
      newcomer.env,
      newcomer.home,
    );
    const times = (text: string) => terminal.screen().split(text).length - 1;
    const type = async (prompt: string, count: number, text: string) => {
      await eventually(() => expect(times(prompt)).toBe(count));
      terminal.press('-l', text);
      terminal.press('Enter');
    };
    try {
      await type('Password', 1, 'a first password');
      await type('Password again', 1, 'a mistyped password');
      await eventually(() => expect(terminal.screen()).toContain('The two passwords differ'));
      expect(terminal.screen()).not.toMatch(/EXIT=\d+/);
      // Both again (the first may be the mistyped one): a third "Password", then a second "again".
      await type('Password', 3, 'the second password');
      await type('Password again', 2, 'the second password');
      await eventually(() => expect(terminal.screen()).toMatch(/EXIT=\d+/));
      expect(terminal.screen()).toContain('EXIT=0');
    } finally {
      terminal.close();
    }
    const login = (password: string) =>
      user().run(['login', '--password', '--email', email], { input: password });
    expect((await login('the second password')).code).toBe(0);
    expect((await login('a first password')).code).toBe(4);
  });
});

describe('logins from two configurations on one host', () => {
  it('mint tokens of different names, so that `token revoke NAME` revokes the one named', async () => {
    const human = await signup();
    const [first, second] = [user(), user()];
    for (const someone of [first, second]) {
      const login = await someone.run(['login', '--password', '--email', human.email, '--json'], {
        input: human.password,
      });
      expect(login.code).toBe(0);
      expect(login.json().tokenName).toMatch(/^convene CLI on .+ \([a-z2-9]{6}\)$/);
    }
    const minted = (await first.run(['token', 'list', '--json']))
      .json()
      .filter((t: any) => t.name.startsWith('convene CLI on '));
    expect(minted).toHaveLength(2);
    expect(new Set(minted.map((t: any) => t.name)).size).toBe(2);
    // The second configuration's token, by its name as `token list` shows it, from the first.
    const theirs = minted.find((t: any) =>
      second.credentials().hosts[server.url].userToken.startsWith(t.prefix),
    );
    const revoked = await first.run(['token', 'revoke', theirs.name, '--json']);
    expect(revoked.code).toBe(0);
    expect(revoked.json()).toEqual({ id: theirs.id, revoked: true });
    // The first's own token still works; the second's does not.
    expect((await first.run(['whoami'])).code).toBe(0);
    const after = (await first.run(['token', 'list', '--json'])).json();
    expect(after.filter((t: any) => t.name.startsWith('convene CLI on ') && !t.revoked)).toHaveLength(1);
  });
});

describe('token revoke on a terminal', () => {
  it('asks first (default no), naming the token and whether convene uses it here; --yes does not', async () => {
    const human = await signup();
    const someone = user();
    const login = await someone.run(['login', '--password', '--email', human.email, '--json'], {
      input: human.password,
    });
    expect(login.code).toBe(0);
    const created = (await someone.run(['token', 'create', 'Laptop', '--json'])).json();
    const question = 'Revoke the token';
    const revoke = (args: string[], key?: string) =>
      answered(someone, ['token', 'revoke', ...args], key === undefined ? undefined : question, key);
    const live = async () =>
      (await someone.run(['token', 'list', '--json']))
        .json()
        .filter((t: any) => !t.revoked)
        .map((t: any) => t.name);
    const declined = await revoke(['Laptop'], 'Enter');
    expect(declined).toContain(
      `Revoke the token Laptop (${created.prefix}…)? Whatever uses it stops linking`,
    );
    expect(declined).toContain('EXIT=1');
    expect(await live()).toContain('Laptop');
    // The one this configuration links with is said to be so.
    const ours = await revoke([login.json().tokenName], 'n');
    expect(ours).toContain(', the one convene uses here?');
    expect(await live()).toContain(login.json().tokenName);
    const yes = await revoke(['Laptop', '--yes']);
    expect(yes).toContain('EXIT=0');
    expect(yes).not.toContain('Revoke the token');
    expect(await live()).not.toContain('Laptop');
  });
});

describe('login --with-token, --password; whoami; token; logout', () => {
  it('saves a piped usr_ token the server accepts, and refuses anything else, saving nothing', async () => {
    const { token } = await withToken();
    const someone = user();
    const unknown = await someone.run(['login', '--with-token'], { input: 'usr_abcdefghijklmnop\n' });
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toContain(`${server.url} does not accept this token`);
    expect(unknown.stderr).toContain('convene token create');
    // As every refusal of the server's, with its status and code for a script.
    const unknownJson = await someone.run(['login', '--with-token', '--json'], {
      input: 'usr_abcdefghijklmnop\n',
    });
    expect(JSON.parse(unknownJson.stderr.trim())).toMatchObject({
      status: 401,
      code: expect.any(String),
      exitCode: 4,
    });
    expect(existsSync(join(someone.env.XDG_CONFIG_HOME!, 'convene/credentials.json'))).toBe(false);
    const offline = await someone.run(['login', '--with-token', '--url', 'http://127.0.0.1:9'], {
      input: `${token}\n`,
    });
    expect(offline.code).toBe(1);
    expect(offline.stderr).toContain('cannot reach http://127.0.0.1:9');
    expect(existsSync(join(someone.env.XDG_CONFIG_HOME!, 'convene/credentials.json'))).toBe(false);
    const saved = await someone.run(['login', '--with-token'], { input: `${token}\n` });
    expect(saved.code).toBe(0);
    expect(someone.credentials().hosts[server.url].userToken).toBe(token);
    const bad = await someone.run(['login', '--with-token'], { input: 'not-a-token\n' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('not a usr_ token');
    // An unset variable piped in is an empty line: said as such, not as a malformed token.
    const empty = await someone.run(['login', '--with-token'], { input: '\n' });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('nothing came on stdin');
    expect(empty.stderr).not.toContain('not a usr_ token');
    expect(someone.credentials().hosts[server.url].userToken).toBe(token);
    // CONVENE_TOKEN overrides the saved one.
    const env = await someone.run(['whoami', '--json'], { env: { CONVENE_TOKEN: 'usr_fromenv' } });
    expect(env.json().userToken).toEqual({ prefix: 'usr_from', source: 'CONVENE_TOKEN', valid: false });
    // A token given with --with-token may be in use elsewhere: logout forgets it, the server keeps it.
    const out = await someone.run(['logout']);
    expect(out.code).toBe(0);
    expect(out.stderr).toContain('stays valid on the server');
    expect(someone.credentials().hosts[server.url].userToken).toBeUndefined();
    expect((await user().run(['whoami'], { env: { CONVENE_TOKEN: token } })).code).toBe(0);
  });

  /** Someone logged in with a password, their credentials saved under `url` too: a server that does not answer. */
  async function loggedInAlsoAt(url: string) {
    const human = await signup();
    const someone = user();
    const login = await someone.run(['login', '--password', '--email', human.email], {
      input: human.password,
    });
    expect(login.code).toBe(0);
    const credentials = someone.credentials();
    credentials.hosts[url] = credentials.hosts[server.url];
    writeFileSync(
      join(someone.env.XDG_CONFIG_HOME!, 'convene/credentials.json'),
      JSON.stringify(credentials),
    );
    return { human, someone, token: credentials.hosts[server.url].userToken as string };
  }

  it('shows a logged-in account whose server does not answer as saved, not checked, exit 0 (it failed, exit 1)', async () => {
    const { human, someone } = await loggedInAlsoAt('http://127.0.0.1:9');
    const away = ['--url', 'http://127.0.0.1:9'];
    const shown = await someone.run(['whoami', ...away]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(human.email);
    expect(shown.stdout).toMatch(/session\s+not checked: no answer, ends /);
    expect(shown.stdout).toMatch(/token\s+usr_\S+… \(saved\), not checked: no answer\n/);
    const json = await someone.run(['whoami', '--json', ...away]);
    expect(json.code).toBe(0);
    expect(json.json()).toMatchObject({
      user: { email: human.email },
      session: { valid: null },
      userToken: { source: 'saved', valid: null },
    });
    const quiet = await someone.run(['whoami', '-q', ...away]);
    expect({ code: quiet.code, stdout: quiet.stdout }).toEqual({ code: 0, stdout: `${human.email}\n` });
  });

  it('logs out offline: forgets the token and says it could not be revoked', async () => {
    const { someone, token } = await loggedInAlsoAt('http://127.0.0.1:9');
    const out = await someone.run(['logout', '--url', 'http://127.0.0.1:9']);
    expect(out.code).toBe(0);
    expect(out.stderr).toContain('Logged out of http://127.0.0.1:9');
    expect(out.stderr).toContain(`could not revoke the token ${token.slice(0, 8)}… on the server`);
    expect(out.stderr).toContain('cannot reach http://127.0.0.1:9');
    expect(someone.credentials().hosts['http://127.0.0.1:9'].userToken).toBeUndefined();
    expect(someone.credentials().hosts['http://127.0.0.1:9'].session).toBeUndefined();
  });

  it('logs in with a password, mints a token for this terminal, manages tokens, and logs out', async () => {
    const human = await signup();
    const someone = user();
    const wrong = await someone.run(['login', '--password', '--email', human.email], {
      input: 'wrong password',
    });
    expect(wrong.code).toBe(4);
    expect(wrong.stderr).toContain('wrong email or password');
    // --email alone is a password login too (it started the browser's flow, ignoring the email).
    const wrongJson = await someone.run(['login', '--email', human.email, '--json'], {
      input: 'wrong password',
    });
    expect(JSON.parse(wrongJson.stderr.trim())).toMatchObject({
      error: 'wrong email or password',
      status: 401,
      code: expect.any(String),
      exitCode: 4,
    });

    const noSession = await someone.run(['token', 'list']);
    expect(noSession.code).toBe(4);
    expect(noSession.stderr).toContain('convene login --password');

    const login = await someone.run(['login', '--password', '--email', human.email, '--json'], {
      input: `${human.password}\n`,
    });
    expect(login.code).toBe(0);
    expect(login.json()).toMatchObject({
      user: { email: human.email, name: 'Ada' },
      tokenPrefix: expect.stringMatching(/^usr_/),
    });
    const host = someone.credentials().hosts[server.url];
    expect(host.session.user.email).toBe(human.email);
    expect(host.userToken).toMatch(/^usr_/);

    const who = await someone.run(['whoami']);
    expect(who.code).toBe(0);
    expect(who.stdout).toContain(`Ada <${human.email}>`);
    expect((await someone.run(['whoami', '-q'])).stdout.trim()).toBe(human.email);

    const created = (await someone.run(['token', 'create', 'CI bot', '--json'])).json();
    expect(created).toMatchObject({
      name: 'CI bot',
      token: expect.stringMatching(/^usr_/),
      id: expect.any(String),
    });
    let tokens = (await someone.run(['token', 'list', '--json'])).json();
    expect(tokens.map((t: any) => t.name)).toEqual(
      expect.arrayContaining(['CI bot', expect.stringContaining('convene CLI on')]),
    );
    expect(tokens.every((t: any) => t.token === undefined)).toBe(true);
    // A name a live token has (any case) is refused: `token revoke NAME` would not know which.
    const twice = await someone.run(['token', 'create', 'ci bot']);
    expect(twice.code).toBe(6);
    expect(twice.stderr).toContain('you already have a token called "CI bot"');
    expect(twice.stderr).toContain('`convene token revoke "CI bot"`');
    // Without a name, the default one, numbered past those of live tokens: each revocable by name.
    const unnamed = [];
    for (let i = 0; i < 2; i++) unnamed.push((await someone.run(['token', 'create', '--json'])).json());
    expect(unnamed.map((t) => t.name)).toEqual(['API token', 'API token 2']);
    for (const name of ['API token', 'api token 2'])
      expect((await someone.run(['token', 'revoke', name])).code).toBe(0);
    expect((await someone.run(['token', 'create', '--json'])).json().name).toBe('API token');
    expect((await someone.run(['token', 'revoke', 'API token'])).code).toBe(0);
    tokens = (await someone.run(['token', 'list', '--json'])).json().filter((t: any) => !t.revoked);
    const blank = await someone.run(['token', 'create', ' ']);
    expect(blank.code).toBe(2);
    expect(blank.stderr).toContain('the token’s name cannot be blank');
    expect(
      (await someone.run(['token', 'list', '--json'])).json().filter((t: any) => !t.revoked),
    ).toHaveLength(tokens.length);
    expect((await someone.run(['token', 'revoke', created.id])).code).toBe(0);
    tokens = (await someone.run(['token', 'list', '--json'])).json();
    expect(tokens.find((t: any) => t.id === created.id).revoked).toBe(true);
    // Again: exit 0 (nothing left to do), but no claim of revoking it now.
    const twiceRevoked = await someone.run(['token', 'revoke', created.id]);
    expect(twiceRevoked.code).toBe(0);
    expect(twiceRevoked.stderr).toContain('was already revoked; nothing changed.');
    expect(twiceRevoked.stderr).not.toContain('✓');
    expect((await someone.run(['token', 'revoke', created.id, '--json'])).json()).toEqual({
      id: created.id,
      revoked: true,
      alreadyRevoked: true,
    });
    // By name too; a name no live token has is not found.
    const second = (await someone.run(['token', 'create', 'Second', '--json'])).json();
    const byName = await someone.run(['token', 'revoke', 'second', '--json']);
    expect(byName.json()).toEqual({ id: second.id, revoked: true });
    // A revoked token named by name or id start: already revoked, not "no token".
    for (const reference of ['Second', second.id.slice(0, 8)]) {
      const again = await someone.run(['token', 'revoke', reference]);
      expect({ reference, code: again.code }).toEqual({ reference, code: 0 });
      expect(again.stderr).toContain('was already revoked; nothing changed.');
    }
    expect((await someone.run(['token', 'revoke', 'second', '--json'])).json()).toEqual({
      id: second.id,
      revoked: true,
      alreadyRevoked: true,
    });
    // A live token of the same name comes first.
    const reborn = (await someone.run(['token', 'create', 'Second', '--json'])).json();
    expect((await someone.run(['token', 'revoke', 'Second', '--json'])).json()).toEqual({
      id: reborn.id,
      revoked: true,
    });
    const gone = await someone.run(['token', 'revoke', 'Nothing like it']);
    expect(gone.code).toBe(5);
    expect(gone.stderr).toContain('convene token list');
    const noToken = await someone.run(['token', 'revoke']);
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toContain('Usage: convene token revoke ID|NAME|PREFIX|TOKEN');
    // The token itself, or its start as `token list` shows it (with or without the …).
    const third = (await someone.run(['token', 'create', 'Third', '--json'])).json();
    const fourth = (await someone.run(['token', 'create', 'Fourth', '--json'])).json();
    const byToken = await someone.run(['token', 'revoke', third.token, '--json']);
    expect(byToken.code).toBe(0);
    expect(byToken.json()).toEqual({ id: third.id, revoked: true });
    const byPrefix = await someone.run(['token', 'revoke', `${fourth.prefix}…`, '--json']);
    expect(byPrefix.code).toBe(0);
    expect(byPrefix.json()).toEqual({ id: fourth.id, revoked: true });
    // A start that several tokens share is a usage error naming them, revoked ones included: with
    // one of them live (this terminal's own), it was revoked.
    const shared = await someone.run(['token', 'revoke', 'usr_']);
    expect(shared.code).toBe(2);
    expect(shared.stderr).toContain(`${fourth.id} (Fourth, ${fourth.prefix}…)`);
    expect((await someone.run(['whoami'])).code).toBe(0);
    // And so is one that several live tokens share.
    const fifth = (await someone.run(['token', 'create', 'Fifth', '--json'])).json();
    const ambiguous = await someone.run(['token', 'revoke', 'usr_']);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toContain('tokens start with "usr_"');
    expect(ambiguous.stderr).toContain(`${fifth.id} (Fifth, ${fifth.prefix}…)`);
    expect(
      (await someone.run(['token', 'list', '--json'])).json().find((t: any) => t.id === fifth.id).revoked,
    ).toBe(false);
    const table = await someone.run(['token', 'list']);
    expect(table.stdout).toMatch(/CI bot\s+\S+\s+usr_\S*….*revoked/);

    // The token login minted for this terminal is revoked on the server, then forgotten.
    const minted = someone.credentials().hosts[server.url].userToken;
    const out = await someone.run(['logout', '--json']);
    expect(out.json()).toEqual({ url: server.url, userToken: true, session: true, tokenRevoked: true });
    expect((await user().run(['whoami'], { env: { CONVENE_TOKEN: minted } })).code).toBe(4);
    const after = await someone.run(['whoami']);
    expect(after.code).toBe(4);
    expect(after.stderr).toContain('not logged in');
    expect(after.stderr).toContain('convene login');
  });
});
