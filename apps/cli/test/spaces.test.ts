import { spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { eventually, finished, follow, joinAs, LEAKY_ENV, suggested, type User } from './helpers/cli';
import { bundle } from './helpers/paths';
import { scriptedProxy } from './helpers/proxy';
import { serverForFile, startServer, type TestServer } from './helpers/server';
import { answered, Terminal } from './helpers/tmux';

const file = serverForFile();
const user = (env: Record<string, string> = {}) => file.user({ env });
let server: TestServer;
beforeAll(() => {
  server = file.server;
});

/** A proxy before the server that loses the answer of every attempt of the next read of a space. */
const spaceReadsLost = () =>
  scriptedProxy(server.url, /^GET \/hub\/space\/[0-9a-f-]{36}$/, 'lost', 'lost', 'lost');

/** Until the owner sees `name` waiting for approval. */
const waitingForApproval = (owner: User, name: string) =>
  eventually(async () =>
    expect(
      (await owner.run(['participants', '--json'])).json().map((p: any) => [p.name, p.status]),
    ).toContainEqual([name, 'waitingForApproval']),
  );

describe('space create, list, show, use, update, close', () => {
  it('creates a second space of a name saved here, and warns that both are now named by id', async () => {
    const owner = user();
    expect((await owner.run(['space', 'create', 'Beta'])).stderr).not.toContain('spaces called');
    const second = await owner.run(['space', 'create', 'beta']);
    expect(second.code).toBe(0);
    expect(second.stderr).toContain(
      'You now have 2 spaces called "beta" here: name them by id (`convene space list` shows the ids) or by their name in its exact case, or give one another name with `convene space update ID --name NEW`.',
    );
    // As it said: the name alone names neither (but as typed, in its case).
    const ambiguous = await owner.run(['space', 'use', 'BEta']);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toContain('2 saved spaces are called "BEta"');
    const json = await owner.run(['space', 'create', 'BETA', '--json']);
    expect(json.json().spaceId).toEqual(expect.any(String));
    expect(JSON.parse(json.stderr.trim())).toEqual({
      warning: expect.stringContaining('You now have 3 spaces called'),
    });
    // Renamed to a name saved here, in its very case: the same warning, without the exact case
    // that would not tell them apart.
    expect((await owner.run(['space', 'create', 'Gamma'])).code).toBe(0);
    const renamed = await owner.run(['space', 'update', 'Gamma', '--name', 'Beta']);
    expect(renamed.code).toBe(0);
    expect(renamed.stderr).toContain(
      'You now have 4 spaces called "Beta" here: name them by id (`convene space list` shows the ids), or give one another name with `convene space update ID --name NEW`.',
    );
    expect((await owner.run(['space', 'update', 'Beta', '--description', 'd'])).stderr).not.toContain(
      'spaces called',
    );
  });

  it('shows the key of a space created or joined that it could not save, rather than lose it', async () => {
    const owner = user();
    expect((await owner.run(['space', 'create', 'First'])).code).toBe(0);
    // A lock left as a directory, long ago: taking it over fails, as a full disk would.
    const lock = join(owner.env.XDG_CONFIG_HOME!, 'convene/credentials.json.lock');
    const jam = () => {
      mkdirSync(lock);
      utimesSync(lock, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    };
    jam();
    const json = await owner.run(['space', 'create', 'Kept', '--json']);
    expect(json.code).toBe(1);
    // The answer on stdout, as a success prints it: a script gets the key all the same.
    const created = JSON.parse(json.stdout);
    expect(created).toEqual({
      spaceId: expect.any(String),
      ownerId: expect.any(String),
      ownerPrivateKey: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    const failure = JSON.parse(json.stderr.trim().split('\n').at(-1)!);
    expect(failure.error).toMatch(
      new RegExp(
        `^created space "Kept" \\(${created.spaceId}\\), but could not keep its key: could not save .*credentials\\.json: .*EISDIR`,
      ),
    );
    expect(failure.hint).toContain(
      `copy it now: ${created.ownerPrivateKey} (participant ${created.ownerId})`,
    );
    expect(failure.exitCode).toBe(1);
    // The space is there, and the key shown is its owner's.
    const read = await fetch(`${server.url}/hub/space/${created.spaceId}`, {
      headers: { 'X-Private-Key': created.ownerPrivateKey },
    });
    expect(read.status).toBe(200);
    expect(owner.credentials().hosts[server.url].spaces[created.spaceId]).toBeUndefined();

    const human = await owner.run(['space', 'create', 'Kept too']);
    expect(human.code).toBe(1);
    expect(human.stderr).toMatch(/Your owner key, kept nowhere else, so copy it now: [0-9a-f]{64} /);
    expect(human.stderr).toContain('Running the command again would make another space.');
    expect(human.stderr).not.toContain('bug in convene');

    // A join likewise: the participant exists, its key is shown.
    rmSync(lock, { recursive: true });
    const invitation = (await owner.run(['invite', '--json'])).json();
    const guest = user();
    expect((await guest.run(['space', 'create', 'Guest own'])).code).toBe(0);
    mkdirSync(join(guest.env.XDG_CONFIG_HOME!, 'convene/credentials.json.lock'));
    utimesSync(join(guest.env.XDG_CONFIG_HOME!, 'convene/credentials.json.lock'), new Date(0), new Date(0));
    const joined = await guest.run(['join', invitation.humanLink, '--name', 'Keeper', '--json']);
    expect(joined.code).toBe(1);
    const member = JSON.parse(joined.stdout);
    expect(member.participantPrivateKey).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.parse(joined.stderr.trim().split('\n').at(-1)!).hint).toContain(
      'Running the command again would make another participant.',
    );
    const participants = (await owner.run(['participants', '--json'])).json();
    expect(participants.map((p: any) => [p.name, p.status])).toContainEqual(['Keeper', 'active']);

    // A join approved after a wait stays saved as waiting: the same join run again gets the key back.
    const gate = user();
    await gate.run(['space', 'create', 'Gated', '--private']);
    const gated = (await gate.run(['invite', '--json'])).json();
    const waiter = user();
    expect((await waiter.run(['space', 'create', 'Waiter own'])).code).toBe(0);
    const waiting = waiter.run(['join', gated.humanLink, '--name', 'Wanda', '--json'], { timeoutMs: 60_000 });
    await waitingForApproval(gate, 'Wanda');
    const waiterLock = join(waiter.env.XDG_CONFIG_HOME!, 'convene/credentials.json.lock');
    mkdirSync(waiterLock);
    utimesSync(waiterLock, new Date(0), new Date(0));
    expect((await gate.run(['approve', 'Wanda'])).code).toBe(0);
    const approved = await waiting;
    expect(approved.code).toBe(1);
    const lost = JSON.parse(approved.stdout);
    expect(JSON.parse(approved.stderr.trim().split('\n').at(-1)!).hint).toContain(
      'The same `convene join` run again within 10 minutes of the approval gets the key back.',
    );
    rmSync(waiterLock, { recursive: true });
    const again = await waiter.run(['join', gated.humanLink, '--name', 'Wanda', '--json'], {
      timeoutMs: 60_000,
    });
    expect(again.code).toBe(0);
    expect(again.json().participantPrivateKey).toBe(lost.participantPrivateKey);
    expect(
      waiter.credentials().hosts[server.url].spaces[gated.humanLink.split('/join/')[1].split('#')[0]].key,
    ).toBe(lost.participantPrivateKey);

    // A join whose read of the space, after the server made the participant, never gets an answer.
    const proxy = await spaceReadsLost();
    try {
      const cut = file.user({ url: undefined });
      const read = await cut.run(
        ['join', invitation.humanLink, '--name', 'Unread', '--url', proxy.url, '--json'],
        {
          timeoutMs: 60_000,
        },
      );
      expect(read.code).toBe(1);
      const kept = JSON.parse(read.stdout);
      expect(kept.participantPrivateKey).toMatch(/^[0-9a-f]{64}$/);
      const said = JSON.parse(read.stderr.trim().split('\n').at(-1)!);
      expect(said.error).toMatch(
        /^joined space \([0-9a-f-]{36}\), but could not keep its key: reading the space failed: /,
      );
      expect(said.hint).toContain(
        `copy it now: ${kept.participantPrivateKey} (participant ${kept.participantId})`,
      );
      const now = (await owner.run(['participants', '--json'])).json();
      expect(now.map((p: any) => [p.participantId, p.name])).toContainEqual([kept.participantId, 'Unread']);
    } finally {
      await proxy.close();
    }
  });

  it('creates a space, keeps its owner key (0600) and makes it the default', async () => {
    const owner = user();
    const created = await owner.run([
      'space',
      'create',
      'Release plan',
      '-d',
      'Plan 2.0',
      '--ttl',
      '2h',
      '--agenda',
      'scope',
      '--json',
    ]);
    expect(created.code).toBe(0);
    const body = created.json();
    expect(body).toEqual({
      spaceId: expect.any(String),
      ownerId: expect.any(String),
      ownerPrivateKey: expect.stringMatching(/^[0-9a-f]{64}$/),
    });

    const file = join(owner.env.XDG_CONFIG_HOME!, 'convene/credentials.json');
    const dir = join(owner.env.XDG_CONFIG_HOME!, 'convene');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    // Opened to others by hand: the next save closes the directory and the file again.
    chmodSync(dir, 0o755);
    chmodSync(file, 0o644);
    // Said on stderr, once, by any command that reads it (as ssh and gh do), --json too.
    const warning = `${file} is readable by other users (mode 644), and it holds your keys: chmod 600 ${file}`;
    const listed = await owner.run(['space', 'list', '--json']);
    expect(listed.json()).toHaveLength(1);
    // With --json stderr is JSON too, one object a line: the warning as {warning}, an error as
    // {error, hint, exitCode}, so a script reads both without telling two formats apart.
    const jsonLines = (text: string) =>
      text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
    expect(jsonLines(listed.stderr)).toEqual([{ warning }]);
    const failed = await owner.run(['space', 'show', 'No such space', '--json']);
    expect(failed.code).toBe(5);
    expect(jsonLines(failed.stderr)).toEqual([{ warning }, expect.objectContaining({ exitCode: 5 })]);
    const used = await owner.run(['space', 'use', body.spaceId]);
    expect(used.code).toBe(0);
    expect(used.stderr.split(`! ${warning}`)).toHaveLength(2);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const host = owner.credentials().hosts[server.url];
    expect(host.defaultSpace).toBe(body.spaceId);
    expect(host.spaces[body.spaceId]).toMatchObject({
      role: 'owner',
      key: body.ownerPrivateKey,
      participantId: body.ownerId,
      name: 'Release plan',
    });

    // Plain output keeps the key out of the scrollback and says where it is.
    const plain = await owner.run(['space', 'create', 'Quiet key']);
    expect(plain.code).toBe(0);
    const kept = Object.values(owner.credentials().hosts[server.url].spaces).find(
      (s: any) => s.name === 'Quiet key',
    ) as any;
    expect(plain.stdout + plain.stderr).not.toContain(kept.key);
    expect(plain.stdout).toContain(kept.spaceId);
    expect(plain.stderr).toContain(`The owner key is kept in ${file}`);
    expect(plain.stderr).toContain('`--json` prints it');
    expect((await owner.run(['space', 'use', body.spaceId])).code).toBe(0);

    const shown = (await owner.run(['space', 'show', '--json'])).json();
    expect(shown).toMatchObject({
      spaceId: body.spaceId,
      name: 'Release plan',
      description: 'Plan 2.0',
      agenda: 'scope',
      privacy: 'public',
      state: 'open',
    });
    expect(shown.ttlRemaining).toBeGreaterThan(7000);
    expect(shown.ttlRemaining).toBeLessThanOrEqual(7200);

    const human = await owner.run(['space', 'show']);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('Release plan');
    // 7,200 s or a little less, by when the server answered: to the nearest minute, as `space list`
    // says it (it said `1h 59m` where the list said `2h left`).
    expect(human.stdout).toMatch(/open, closes in 2h\n/);
    // Not a terminal: plain text, no escape codes.
    expect(human.stdout).not.toContain('\u001b[');
  });

  it('takes --owner-role, says who you are in it, and that it replaced the default space', async () => {
    const owner = user();
    const first = await owner.run([
      'space',
      'create',
      'Retro',
      '--owner-name',
      'Review bot',
      '--owner-role',
      'facilitator',
    ]);
    expect(first.code).toBe(0);
    expect(first.stderr).toMatch(/Created public space Retro \(closes in 1d\), now your default space\n/);
    expect(first.stdout).toMatch(/^you are +Review bot, an agent, role facilitator$/m);
    expect(first.stderr).not.toContain('Others see you as that');
    expect((await owner.run(['participants', '--json'])).json()).toEqual([
      expect.objectContaining({ name: 'Review bot', role: 'facilitator', isOwner: true, isHuman: false }),
    ]);

    // The server's defaults, said as such; the next commands go to the new space, and it says so.
    const second = await owner.run(['space', 'create', 'Scratch']);
    expect(second.stderr).toContain('now your default space instead of Retro');
    expect(second.stdout).toMatch(/^you are +Owner, an agent, role owner$/m);
    expect(second.stderr).toContain(
      'Others see you as that: --owner-name, --owner-role and --human say who you are.',
    );
    const [back] = suggested(second.stderr);
    expect(back).toEqual(['space', 'use', 'Retro']);
    expect((await owner.run(back!)).code).toBe(0);
    expect((await owner.run(['space', 'show', '--json'])).json().name).toBe('Retro');
    expect((await owner.run(['space', 'create', 'Pair', '--human', '--owner-name', 'Ada'])).stdout).toMatch(
      /^you are +Ada, a human, role owner$/m,
    );
  });

  it('refuses names that hold a newline (the space, its owner, a document), saying why, and keeps a description’s lines', async () => {
    const owner = user();
    const oneLine = /name must be one line without control characters \(a line break, a tab, an escape\)/i;
    for (const args of [
      ['space', 'create', 'Plan\nB'],
      ['space', 'create', 'Plan B', '--owner-name', 'Ow\nner'],
    ]) {
      const refused = await owner.run(args);
      expect({ args, code: refused.code }).toEqual({ args, code: 2 });
      expect(refused.stderr).toMatch(oneLine);
    }
    expect((await owner.run(['space', 'list', '--json'])).json()).toEqual([]);
    expect((await owner.run(['space', 'create', 'Plan B', '-d', 'one\ntwo'])).code).toBe(0);
    const document = await owner.run(['artifact', 'create', 'doc\nname.md']);
    expect(document.code).toBe(2);
    expect(document.stderr).toMatch(oneLine);
    const renamed = await owner.run(['space', 'update', '--name', 'Plan\nC']);
    expect(renamed.code).toBe(2);
    const human = await owner.run(['space', 'show']);
    // The header is the name, on its line; the description keeps its lines.
    expect(human.stdout.split('\n').slice(0, 3)).toEqual(['Plan B', 'one', 'two']);
    expect((await owner.run(['artifact', 'list', '--json'])).json()).toEqual([]);
  });

  it('shows who you are in a space (name, role, status) and its participants in columns', async () => {
    const owner = user();
    expect((await owner.run(['space', 'create', 'Columns', '--owner-name', 'Alice', '--human'])).code).toBe(
      0,
    );
    const carol = user();
    await joinAs(owner, carol, 'Carol Long-Name');
    expect((await owner.run(['mute', 'Carol'])).code).toBe(0);
    const shown = await carol.run(['space', 'show']);
    expect(shown.code).toBe(0);
    const { participantId } = Object.values(carol.credentials().hosts[server.url].spaces)[0] as any;
    expect(shown.stdout).toMatch(
      new RegExp(`^you are +Carol Long-Name, an agent, muted \\(${participantId}\\)$`, 'm'),
    );
    const lines = shown.stdout.split('\n');
    const rows = lines.slice(lines.indexOf('Participants (2)') + 1, lines.indexOf('Participants (2)') + 3);
    expect(rows).toEqual([
      '  Alice                  owner, human  active',
      '  Carol Long-Name (you)  agent         muted',
    ]);
    // The owner's own line, as whoami says it: active goes without saying.
    expect((await owner.run(['space', 'show'])).stdout).toMatch(/^you are +Alice, a human, role owner \(/m);
    // An owner whose role says something else is said to be the owner.
    const bot = user();
    expect(
      (await bot.run(['space', 'create', 'Bot', '--owner-name', 'Review bot', '--owner-role', 'facilitator']))
        .code,
    ).toBe(0);
    expect((await bot.run(['space', 'show'])).stdout).toMatch(
      /^you are +Review bot, an agent, role facilitator, the owner \(/m,
    );
    expect((await bot.run(['whoami'])).stdout).toMatch(
      /^you are +Review bot, an agent, role facilitator, the owner$/m,
    );
  });

  it('lists saved spaces with their state, marks the default, and switches with `space use` (name, id or prefix)', async () => {
    const owner = user();
    const a = (await owner.run(['space', 'create', 'Alpha', '--json'])).json();
    const b = (await owner.run(['space', 'create', 'Beta', '--private', '--json'])).json();
    let list = (await owner.run(['space', 'list', '--json'])).json();
    expect(list.map((s: any) => [s.name, s.isDefault, s.state, s.role])).toEqual([
      ['Alpha', false, 'open', 'owner'],
      ['Beta', true, 'open', 'owner'],
    ]);
    expect(list[1].privacy).toBe('private');

    expect((await owner.run(['space', 'use', 'alpha'])).code).toBe(0);
    expect((await owner.run(['space', 'show', '--json'])).json().spaceId).toBe(a.spaceId);
    expect((await owner.run(['space', 'use', b.spaceId.slice(0, 8), '-q'])).stdout.trim()).toBe(b.spaceId);
    list = (await owner.run(['space', 'list', '--json'])).json();
    expect(list.find((s: any) => s.isDefault).spaceId).toBe(b.spaceId);

    const table = await owner.run(['space', 'list']);
    expect(table.stdout).toMatch(/\*\s+Beta/);
    // The same server by another of this machine's names (`serve` prints 127.0.0.1): the keys
    // are saved under the name they were made with, and the empty list says where.
    const url = new URL(server.url);
    url.hostname = url.hostname === 'localhost' ? '127.0.0.1' : 'localhost';
    const alias = url.toString().replace(/\/$/, '');
    const elsewhere = await owner.run(['space', 'list', '--url', alias]);
    expect(elsewhere.code).toBe(0);
    expect(elsewhere.stderr).toContain(`No spaces saved for ${alias}`);
    // Of no space in particular: the keys, not an "it" that names nothing.
    expect(elsewhere.stderr).toContain(`Your space keys are saved under ${server.url}`);
    // Another server (an earlier `serve --port`): where the keys are, and how to use them.
    const other = await owner.run(['space', 'list', '--url', 'http://127.0.0.1:9']);
    expect(other.code).toBe(0);
    expect(other.stderr).toContain('No spaces saved for http://127.0.0.1:9');
    expect(other.stderr).toContain(
      `Keys are saved for another server: ${server.url} (2 spaces). Add \`--url ${server.url}\` (or set CONVENE_URL) to use them.`,
    );
    // A command that cannot reach a server no key is saved for says where they are, too.
    const unreachable = await owner.run(['space', 'create', 'Gamma', '--url', 'http://127.0.0.1:9']);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain('cannot reach http://127.0.0.1:9');
    expect(unreachable.stderr).toContain(`Keys are saved for another server: ${server.url} (2 spaces).`);

    // A space named so nowhere is not found (5), as a document or a participant named so is.
    const unknown = await owner.run(['space', 'use', 'Gamma']);
    expect(unknown.code).toBe(5);
    expect(unknown.stderr).toContain('no space "Gamma" among those you hold keys for');
    expect(unknown.stderr).toContain('convene space list');
    expect(unknown.stderr).not.toContain('Did you mean');
    const typo = await owner.run(['send', 'Alpah', 'hello']);
    expect(typo.code).toBe(5);
    expect(typo.stderr).toContain('Did you mean "Alpha"?');
    // One suggestion: a space one letter away is the likelier meaning than unquoted words.
    expect(typo.stderr).not.toContain('quote');
    const unknownDoc = await owner.run(['artifact', 'show', 'nosuch.md']);
    expect(unknownDoc.code).toBe(5);
    const json = await owner.run(['messages', 'Gamma', '--json']);
    expect(JSON.parse(json.stderr)).toMatchObject({ exitCode: 5 });
    // A whole id names a space that may exist: what is missing is its key (4), and how to get one.
    const unheld = await owner.run(['send', '1b2c3d4e-0000-4000-8000-000000000000', 'hello']);
    expect(unheld.code).toBe(4);
    expect(unheld.stderr).toContain('no key for space 1b2c3d4e-0000-4000-8000-000000000000');
    expect(unheld.stderr).toContain('convene join 1b2c3d4e-0000-4000-8000-000000000000 --key KEY');
    // A key linked to one's account comes back after a login.
    expect(unheld.stderr).toContain(
      '`convene login` then `convene space use 1b2c3d4e-0000-4000-8000-000000000000` recovers your key',
    );
  });

  it('updates name, description and agenda (owner only) and refuses an empty update', async () => {
    const owner = user();
    const { spaceId } = (await owner.run(['space', 'create', 'Old name', '--json'])).json();
    const updated = await owner.run([
      'space',
      'update',
      '--name',
      'New name',
      '--agenda',
      '1. dates',
      '-d',
      'desc',
      '--json',
    ]);
    expect(updated.code).toBe(0);
    // The space as the server has it after the update: what `space show --json` prints (but for
    // what moves between the two reads: its time to live, when the owner's key was last seen).
    const shown = (await owner.run(['space', 'show', 'New name', '--json'])).json();
    expect(shown).toMatchObject({ spaceId, name: 'New name', agenda: '1. dates', description: 'desc' });
    expect(updated.json()).toEqual({
      ...shown,
      ttlRemaining: expect.any(Number),
      participants: shown.participants.map((p: any) => ({ ...p, lastSeenAt: expect.any(String) })),
    });
    // What was not given stays as it was, and is there too: a script needs no second command.
    const budget = await owner.run(['space', 'update', '--max-messages-per-minute', '5', '--json']);
    expect(budget.json()).toMatchObject({
      spaceId,
      name: 'New name',
      agenda: '1. dates',
      maxMessagesPerMinute: 5,
    });
    // In words, by the name the space had: the default space is easily not the one meant.
    const renamed = await owner.run(['space', 'update', '--name', 'Newer', '--agenda', '2. owners']);
    expect(renamed.stderr).toBe('✓ Renamed New name to Newer, and updated its agenda\n');
    const described = await owner.run(['space', 'update', '-d', 'more', '--agenda', '3. go']);
    expect(described.stderr).toBe('✓ Updated description and agenda of Newer\n');
    const empty = await owner.run(['space', 'update']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('nothing to change');
  });

  it('says an update done when the space cannot be read back for --json: a warning, the answer, exit 0', async () => {
    // Every attempt of the read after the update loses its answer (GET /hub/space/{spaceId}).
    const proxy = await spaceReadsLost();
    try {
      const owner = file.user({ url: proxy.url });
      expect((await owner.run(['space', 'create', 'Readless'])).code).toBe(0);
      const updated = await owner.run(
        ['space', 'update', '--name', 'Read later', '--agenda', 'later', '--json'],
        {
          timeoutMs: 60_000,
        },
      );
      expect(updated.code).toBe(0);
      // The update's own answer, since the space as it is now could not be read.
      expect(updated.json()).toEqual({
        ok: true,
        spaceId: expect.any(String),
        name: 'Read later',
        agenda: 'later',
      });
      expect(JSON.parse(updated.stderr)).toEqual({
        warning: expect.stringMatching(
          /^updated Read later, but could not read it back: no answer from http:\/\/127\.0\.0\.1:\d+: .* \(`convene space show` shows it\)$/,
        ),
      });
      // It was updated, and the saved name follows.
      expect((await owner.run(['space', 'show', 'Read later', '--json'])).json()).toMatchObject({
        name: 'Read later',
        agenda: 'later',
      });
    } finally {
      await proxy.close();
    }
  });

  it('sets and removes the message budget (--max-messages-per-minute), shown by space show', async () => {
    const owner = user();
    const guest = user();
    expect((await owner.run(['space', 'create', 'Budgeted'])).code).toBe(0);
    await joinAs(owner, guest, 'Loopy');
    const set = await owner.run(['space', 'update', '--max-messages-per-minute', '2']);
    expect(set.code).toBe(0);
    expect(set.stderr).toBe('✓ Updated message budget of Budgeted\n');
    expect((await owner.run(['space', 'show', '--json'])).json().maxMessagesPerMinute).toBe(2);
    expect((await owner.run(['space', 'show'])).stdout).toMatch(
      /budget\s+2 messages a minute per participant/,
    );
    // The server holds senders to it (its own tests); two messages are within it.
    for (const text of ['one', 'two']) expect((await guest.run(['send', text])).code).toBe(0);

    const removed = await owner.run(['space', 'update', '--max-messages-per-minute', 'none']);
    expect(removed.code).toBe(0);
    expect((await owner.run(['space', 'show', '--json'])).json().maxMessagesPerMinute ?? null).toBeNull();
    expect((await owner.run(['space', 'show'])).stdout).not.toContain('budget');
    for (const bad of ['0', '10001', '1.5', 'lots']) {
      const refused = await owner.run(['space', 'update', '--max-messages-per-minute', bad]);
      expect(refused.code, bad).toBe(2);
      expect(refused.stderr).toContain(
        '--max-messages-per-minute must be a whole number from 1 to 10000, or none',
      );
    }
  });

  it('refreshes a participant’s saved name of a space the owner renamed when listing, and keeps it offline', async () => {
    const owner = user();
    const guest = user();
    const { spaceId } = (await owner.run(['space', 'create', 'Standup', '--json'])).json();
    await joinAs(owner, guest, 'Gus');
    expect((await owner.run(['space', 'update', '--name', 'Retro'])).code).toBe(0);
    const listed = await guest.run(['space', 'list']);
    expect(listed.stdout).toMatch(/\*\s+Retro\s/);
    // What the list showed is the name the other commands take, and the one they print.
    expect(guest.credentials().hosts[server.url].spaces[spaceId].name).toBe('Retro');
    const sent = await guest.run(['send', 'Retro', 'hello']);
    expect(sent.code).toBe(0);
    expect(sent.stderr).toContain('Sent to Retro');
    expect((await guest.run(['whoami', '--json'])).json().defaultSpace.name).toBe('Retro');
    // A server that does not answer: the saved names, as they are, and the list still exit 0.
    const credentials = guest.credentials();
    credentials.hosts['http://127.0.0.1:9'] = credentials.hosts[server.url];
    writeFileSync(join(guest.env.XDG_CONFIG_HOME!, 'convene/credentials.json'), JSON.stringify(credentials));
    const offline = await guest.run(['space', 'list', '--json', '--url', 'http://127.0.0.1:9']);
    expect(offline.code).toBe(0);
    expect(offline.json()).toEqual([expect.objectContaining({ name: 'Retro', state: 'unavailable' })]);
    expect(guest.credentials().hosts['http://127.0.0.1:9'].spaces[spaceId].name).toBe('Retro');
    // In a table: the state not checked, and why said once on stderr, with how to start the server.
    const table = await guest.run(['space', 'list', '--url', 'http://127.0.0.1:9']);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/\*\s+Retro\s.*not checked: no answer/);
    expect(table.stdout).not.toContain('ECONNREFUSED');
    expect(table.stderr).toContain('http://127.0.0.1:9 does not answer: the states are not checked');
    // Pasted elsewhere, a line would start a new, empty server, where every saved space is "not
    // found"; and where its data is (./.data where it started, or DATA_DIR, --data-dir,
    // --database-url) convene cannot know, so it is not said as a fact. How it must run, instead.
    expect(table.stderr).toContain(
      'Start the server that keeps your spaces again, on its own data: convene serve --port 9 as it was started, with its data (./.data in the directory it was started from, unless it was given --data-dir, DATA_DIR, --database-url or DATABASE_URL, which it needs again). Started on other data, it would be a new server, without your spaces.',
    );
    expect(table.stderr).not.toContain('its data is in .data there');
    expect(table.stderr).not.toContain('`convene serve');
  });

  it('closes a space: its keys stop working, and its owner keeps it as closed, as a participant does', async () => {
    const owner = user();
    const { spaceId, ownerPrivateKey } = (
      await owner.run(['space', 'create', 'Short-lived', '--json'])
    ).json();
    // Off a terminal, closing for good takes the space's name (or --yes for the default space).
    const unnamed = await owner.run(['space', 'close']);
    expect(unnamed.code).toBe(2);
    expect(unnamed.stderr).toContain('name the space to close');
    expect(owner.credentials().hosts[server.url].spaces[spaceId]).toBeDefined();
    // Its help says the same: SPACE may be left out (for the default space).
    expect((await owner.run(['space', 'close', '--help'])).stdout).toContain(
      'Usage: convene space close [SPACE] [options]',
    );
    const closed = await owner.run(['space', 'close', 'Short-lived']);
    expect(closed.code).toBe(0);
    expect(closed.stderr).toContain('Closed Short-lived');
    expect(closed.stderr).toContain('`convene leave "Short-lived"` forgets it here');
    const response = await fetch(`${server.url}/hub/space/${spaceId}`, {
      headers: { 'x-private-key': ownerPrivateKey },
    });
    expect(response.status).toBe(401);
    // Kept, listed as closed; a second close (a teardown run again) says so, exit 0.
    expect(owner.credentials().hosts[server.url].spaces[spaceId]).toBeDefined();
    expect((await owner.run(['space', 'list', '--json'])).json()).toEqual([
      expect.objectContaining({ spaceId, state: 'closed' }),
    ]);
    for (const args of [
      ['space', 'close', spaceId, '--yes'],
      ['space', 'close', '--yes'],
    ]) {
      const again = await owner.run(args);
      expect({ args, code: again.code }).toEqual({ args, code: 0 });
      expect(again.stderr).toContain('Short-lived is already closed; nothing changed');
    }
    const json = await owner.run(['space', 'close', 'Short-lived', '--json']);
    expect(json.json()).toEqual({ ok: true, alreadyClosed: true });
    // Anything else on it: "is closed", exit 6, never "join it" (the key was never lost).
    for (const args of [
      ['space', 'show', spaceId],
      ['space', 'show', 'Short-lived'],
      ['invite', spaceId],
      ['send', 'hi'],
    ]) {
      const result = await owner.run(args);
      expect({ args, code: result.code }).toEqual({ args, code: 6 });
      expect(result.stderr).toContain('"Short-lived" is closed');
      expect(result.stderr).not.toContain('convene join');
    }
    // `leave` forgets it, as it does a participant's.
    const left = await owner.run(['leave', 'Short-lived', '--yes']);
    expect(left.code).toBe(0);
    expect(left.stderr).toContain('Forgot Short-lived here: it was already closed');
    expect(owner.credentials().hosts[server.url].spaces[spaceId]).toBeUndefined();
  });

  it('asks on a terminal with how to save the documents first; unasked, says after the close what was lost', async () => {
    const owner = user();
    (await owner.run(['space', 'create', 'Docs inside', '--json'])).json();
    for (const name of ['plan.md', 'notes.md']) {
      expect((await owner.run(['artifact', 'create', name], { input: '# x\n', stdin: 'pipe' })).code).toBe(0);
    }
    // On a terminal, the question says what closing takes, and how to save it while there is time.
    // (The prompt's border, where its lines wrap, left out.)
    const asked = (await answered(owner, ['space', 'close'], 'Close "Docs inside" for good?', 'n')).replace(
      /[│\s]+/g,
      ' ',
    );
    expect(asked).toContain('EXIT=1');
    expect(asked).toContain(
      'Every key stops working, and its 2 documents and messages can no longer be read',
    );
    // The document's name quoted, as in every command line a hint suggests.
    expect(asked).toMatch(/Save them first: `convene artifact download "(plan|notes)\.md" -o FILE`/);
    // Nobody asked (--yes, or off a terminal): no advice to save what the same run then closes;
    // what was lost is said once it is closed.
    const closed = await owner.run(['space', 'close', '--yes']);
    expect(closed.code).toBe(0);
    expect(closed.stderr).not.toContain('Save');
    expect(closed.stderr).not.toContain('convene artifact download');
    expect(closed.stderr).toMatch(
      /Closed Docs inside; its keys no longer work\nIts 2 documents and messages can no longer be read by anyone\.\n/,
    );
    // Nothing to save: the messages alone are named.
    (await owner.run(['space', 'create', 'Empty', '--json'])).json();
    const empty = await owner.run(['space', 'close', 'Empty']);
    expect(empty.code).toBe(0);
    expect(empty.stderr).toMatch(
      /Closed Empty; its keys no longer work\nIts messages can no longer be read by anyone\.\n/,
    );
    expect(empty.stderr).not.toContain('Every key stops working');
  });

  it('takes -s/--space on every command acting on a space, as well as SPACE; two different spaces are a usage error', async () => {
    const owner = user();
    const { spaceId } = (await owner.run(['space', 'create', 'Named here', '--json'])).json();
    // Another space is the default: each command must act on the one named.
    (await owner.run(['space', 'create', 'Default one', '--json'])).json();
    for (const args of [
      ['messages'],
      ['inbox'],
      ['participants'],
      ['invite'],
      ['space', 'show'],
      ['space', 'update', '--agenda', 'Dates'],
    ]) {
      for (const flag of ['--space', '-s']) {
        const result = await owner.run([...args, flag, 'Named here', '--json'], { timeoutMs: 10_000 });
        expect({ args, flag, code: result.code, stderr: result.stderr }).toEqual({
          args,
          flag,
          code: 0,
          stderr: '',
        });
      }
      const both = await owner.run([...args, 'Default one', '--space', 'Named here']);
      expect({ args, code: both.code }).toEqual({ args, code: 2 });
      expect(both.stderr).toContain('two spaces named: "Default one" as SPACE and "Named here" with --space');
      // The same space twice is that space, however each names it: its name in any case, its id,
      // the start of its id.
      for (const [argument, option] of [
        ['Named here', 'Named here'],
        ['Named here', spaceId],
        [spaceId.slice(0, 8), 'Named here'],
        ['Named here', 'NAMED HERE'],
      ]) {
        const same = await owner.run([...args, argument!, '-s', option!, '--json']);
        expect({ args, argument, option, code: same.code, stderr: same.stderr }).toEqual({
          args,
          argument,
          option,
          code: 0,
          stderr: '',
        });
      }
    }
    // tail follows until stopped: its refusal of two spaces is enough here (it runs as the others).
    const tail = await owner.run(['tail', 'Default one', '-s', spaceId]);
    expect(tail.code).toBe(2);
    expect(tail.stderr).toContain(`two spaces named: "Default one" as SPACE and "${spaceId}" with --space`);
    expect(tail.stderr).toContain(
      'Name the space once: `convene tail SPACE` or `convene tail --space SPACE`.',
    );
    expect((await owner.run(['space', 'show', '-s', 'Named here', '--json'])).json()).toMatchObject({
      spaceId,
      agenda: 'Dates',
    });
    const closed = await owner.run(['space', 'close', '--space', 'Named here']);
    expect(closed.code).toBe(0);
    expect(closed.stderr).toContain('Closed Named here');
    const left = await owner.run(['leave', '-s', 'Named here']);
    expect(left.code).toBe(0);
    expect(owner.credentials().hosts[server.url].spaces[spaceId]).toBeUndefined();
  });

  it('reports a closed space to its participants one way (exit 6, no "join again"), whatever the command', async () => {
    const owner = user();
    const guest = user();
    (await owner.run(['space', 'create', 'Finished', '--json'])).json();
    await joinAs(owner, guest, 'Gus');
    const { humanLink } = (await owner.run(['invite', '--json'])).json();
    expect((await owner.run(['space', 'close', 'Finished'])).code).toBe(0);
    // Someone who never joined: nothing of it is kept here for `leave` to forget.
    const late = await user().run(['join', humanLink, '--name', 'Late']);
    expect(late.code).toBe(6);
    expect(late.stderr).toContain('is closed: it takes no one new');
    expect(late.stderr).toContain('This space was closed by its owner, for good.');
    // Nor does it have other spaces to list.
    expect(late.stderr).not.toContain('convene space list');
    expect(late.stderr).not.toContain('convene leave');
    // The server answers 409 to some of these and 401 ("its keys no longer work") to others.
    for (const args of [['send', 'hello'], ['messages'], ['inbox'], ['artifact', 'list'], ['tail']]) {
      const result = await guest.run(args);
      expect({ args, code: result.code }).toEqual({ args, code: 6 });
      expect(result.stderr).toContain('"Finished" is closed');
      expect(result.stderr).toContain('`convene leave "Finished"` forgets it here.');
      expect(result.stderr).not.toContain('convene join');
    }
    const json = await guest.run(['messages', '--json']);
    // The server's code too, as the README's error shape says.
    expect(JSON.parse(json.stderr)).toMatchObject({ code: 'space_closed', exitCode: 6 });
    const listed = (await guest.run(['space', 'list', '--json'])).json();
    expect(listed).toEqual([expect.objectContaining({ name: 'Finished', state: 'closed' })]);
    const doctor = await guest.run(['doctor']);
    expect(doctor.stdout).toContain('✗ default space: "Finished" is closed');
    expect(doctor.stdout).not.toContain('join again');
    // The one space saved here: nothing works on a space any more, a failed check; no "other
    // spaces" to list or pick, but a new one to make.
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toContain(
      '"Finished" was closed by its owner, for good; `convene leave "Finished"` forgets it here;',
    );
    expect(doctor.stdout).not.toContain('space list');
    expect(doctor.stdout).not.toContain('space use');
    expect(doctor.stdout).toContain('`convene space create NAME` or `convene join LINK` for another');
  });

  it('has doctor warn, not fail, of a closed default space when other spaces are saved', async () => {
    const owner = user();
    const guest = user();
    expect((await guest.run(['space', 'create', 'Still mine'])).code).toBe(0);
    expect((await owner.run(['space', 'create', 'Ending'])).code).toBe(0);
    await joinAs(owner, guest, 'Gus');
    expect((await owner.run(['space', 'close', '--yes'])).code).toBe(0);
    const doctor = await guest.run(['doctor']);
    expect(doctor.code).toBe(0);
    expect(doctor.stdout).toContain(
      '! default space: "Ending" is closed: its keys no longer work (1 other space saved here)',
    );
    expect(doctor.stdout).toContain('`convene leave "Ending"` forgets it here');
    expect(doctor.stdout).toContain(
      '`convene leave "Ending"` forgets it here, and `convene space list` shows your other spaces; pick another with `convene space use SPACE`.',
    );
    // With --url given, every line it suggests gives it again (space list, space use too).
    const url = await guest.run(['--url', server.url, 'send', 'hi', '--space', 'Ending']);
    expect(url.code).toBe(6);
    expect(url.stderr).toContain(`\`convene space list --url ${server.url}\` shows your other spaces`);
    const checks = (await guest.run(['doctor', '--json'])).json().checks;
    expect(checks).toContainEqual(expect.objectContaining({ name: 'default space', status: 'warn' }));
  });

  it('answers with the right exit code and a next step when there is no space or no server', async () => {
    const nobody = user();
    const none = await nobody.run(['send', 'hello']);
    expect(none.code).toBe(4);
    expect(none.stderr).toContain('convene space create NAME');
    expect(none.stderr).toContain('convene join LINK');

    const offline = file.user({ url: 'http://127.0.0.1:9' });
    const down = await offline.run(['space', 'create', 'X']);
    expect(down.code).toBe(1);
    expect(down.stderr).toContain('cannot reach http://127.0.0.1:9');
    // A server on this machine: how to start it on that port.
    expect(down.stderr).toContain('Start one in another terminal with `convene serve --port 9`');
    expect(down.stderr).not.toContain('    at ');
    // Commands that need a saved space: with none saved for a server that does not answer, the
    // server is the problem to report (creating a space there would fail too).
    for (const args of [['send', 'hello'], ['messages'], ['send', 'Somewhere', 'hi']]) {
      const noSpace = await offline.run(args);
      expect({ args, code: noSpace.code }).toEqual({ args, code: 1 });
      expect(noSpace.stderr).toContain('cannot reach http://127.0.0.1:9');
      expect(noSpace.stderr).toContain('convene serve --port 9');
      expect(noSpace.stderr).not.toContain('no space chosen');
    }
    // The list is of the keys kept here; with none, no server was asked: not "no spaces on it".
    const listed = await offline.run(['space', 'list']);
    expect(listed.code).toBe(0);
    expect(listed.stderr).toContain('No spaces saved for http://127.0.0.1:9:');
    expect(listed.stderr).not.toContain('No spaces on');
    const unresolved = await offline.run(['space', 'create', 'X', '--url', 'http://convene.invalid']);
    expect(unresolved.code).toBe(1);
    expect(unresolved.stderr).toContain('Check the address (--url or CONVENE_URL)');

    // What the server refuses as bad input is a usage error pointing at the command's help.
    const tooLong = await nobody.run(['space', 'create', 'x'.repeat(201)]);
    expect(tooLong.code).toBe(2);
    expect(tooLong.stderr).toMatch(/^✗ .*name/m);
    expect(tooLong.stderr).not.toMatch(/^✗ 400/m);
    expect(tooLong.stderr).toContain('See `convene space create --help`.');
    const tooLongJson = await nobody.run(['space', 'create', 'x'.repeat(201), '--json']);
    expect(JSON.parse(tooLongJson.stderr)).toMatchObject({ status: 400, exitCode: 2 });

    const badUrl = await nobody.run(['space', 'list', '--url', 'not a url']);
    expect(badUrl.code).toBe(2);
    // From the environment, the error names it: there is no --url on the command line to fix.
    for (const value of ['not a url', 'localhost:3720']) {
      const badEnv = await nobody.run(['space', 'list'], { env: { CONVENE_URL: value } });
      expect(badEnv.code).toBe(2);
      expect(badEnv.stderr).toContain(`CONVENE_URL "${value}" is not`);
      expect(badEnv.stderr).toContain('Set CONVENE_URL to the server, e.g. CONVENE_URL=http://');
      expect(badEnv.stderr).not.toContain('--url');
    }
  });

  it('fails with usage (exit 2) when a required argument is missing and nobody can be asked', async () => {
    const someone = user();
    const missing = await someone.run(['space', 'create']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('missing name of the space');
    expect(missing.stderr).toContain('Usage: convene space create NAME');
    const ttl = await someone.run(['space', 'create', 'X', '--ttl', 'forever']);
    expect(ttl.code).toBe(2);
    expect(ttl.stderr).toContain('--ttl must be a duration');
    // A name of spaces alone is refused like an empty one, before anything is made.
    for (const [args, what] of [
      [['space', 'create', '   '], 'the space’s name'],
      [['space', 'create', 'X', '--owner-name', ' '], '--owner-name'],
      [['space', 'update', '--name', '\t'], '--name'],
      [['join', `${server.url}/join/00000000-0000-4000-8000-000000000000#key=k`, '--name', '  '], '--name'],
    ] as const) {
      const blank = await someone.run([...args]);
      expect({ args, code: blank.code }).toEqual({ args, code: 2 });
      expect(blank.stderr).toContain(`${what} cannot be blank`);
    }
    expect(existsSync(join(someone.env.XDG_CONFIG_HOME!, 'convene/credentials.json'))).toBe(false);
  });
});

describe('the server remembered once its last space is forgotten', () => {
  it('says how to go back to the server that has keys: the `space use … --url` that remembers it', async () => {
    const wanderer = file.user({ url: undefined });
    // Another server (a proxy before the same one, at another address), where one space is made.
    const other = await scriptedProxy(server.url, /^$/);
    try {
      expect((await wanderer.run(['--url', server.url, 'space', 'create', 'Home'])).code).toBe(0);
      expect((await wanderer.run(['--url', other.url, 'space', 'create', 'Trial'])).code).toBe(0);
      expect((await wanderer.run(['space', 'close', '--yes'])).code).toBe(0);
      const left = await wanderer.run(['leave', '--yes']);
      expect(left.code).toBe(0);
      const back = `\`convene space use "Home" --url ${server.url}\` to make it the server of the next commands`;
      expect(left.stderr.replace(/\s+/g, ' ')).toContain(
        `No space is saved here now: create one with \`convene space create NAME\` or join one with \`convene join LINK\`. Keys are saved for another server: ${server.url} (1 space). Add \`--url ${server.url}\` (or set CONVENE_URL) to use it, or ${back}.`,
      );
      // The next command still goes to the server remembered, and says the same.
      const stuck = await wanderer.run(['messages']);
      expect(stuck.code).toBe(4);
      expect(stuck.stderr).toContain(`no space chosen on ${other.url}`);
      expect(stuck.stderr.replace(/\s+/g, ' ')).toContain(back);
      // Given with --url (or CONVENE_URL), the server is the one named: no going back to offer.
      const named = await wanderer.run(['messages', '--url', other.url]);
      expect(named.stderr).not.toContain('space use');
      // The line, run as it is, goes back.
      const line = suggested(stuck.stderr).find((words) => words[0] === 'space');
      expect(line).toEqual(['space', 'use', 'Home', '--url', server.url]);
      expect((await wanderer.run(line!)).code).toBe(0);
      expect((await wanderer.run(['messages'])).code).toBe(0);
    } finally {
      await other.close();
    }
  });
});

describe('invite, join, participants, moderation, leave', () => {
  it('invites, and a second person joins a public space by link; the key is kept and the space is the default', async () => {
    const owner = user();
    (await owner.run(['space', 'create', 'Open room', '--json'])).json();
    const invitation = (await owner.run(['invite', '--json'])).json();
    expect(invitation).toEqual({
      humanLink: expect.stringContaining(`${server.url}/join/`),
      agentLink: expect.stringContaining('/agent.md?key='),
      publicInvitationKey: expect.any(String),
    });
    // The second terminal has no CONVENE_URL: the link names the server.
    const guest = file.user({ url: undefined });
    const joined = await guest.run([
      'join',
      invitation.humanLink,
      '--name',
      'Ada',
      '--role',
      'reviewer',
      '--human',
      '--json',
    ]);
    expect(joined.code).toBe(0);
    const body = joined.json();
    expect(body.participantPrivateKey).toMatch(/^[0-9a-f]{64}$/);
    const saved = guest.credentials();
    expect(saved.url).toBe(server.url);
    expect(saved.hosts[server.url].defaultSpace).toBe(body.spaceId);

    const people = (await guest.run(['participants', '--json'])).json();
    expect(people.map((p: any) => [p.name, p.role, p.status, p.isHuman])).toEqual(
      [
        ['Owner', 'owner', 'active', false],
        ['Ada', 'reviewer', 'active', true],
      ].map(([name, role, status, isHuman]) =>
        name === 'Owner'
          ? [expect.any(String), expect.any(String), status, isHuman]
          : [name, role, status, isHuman],
      ),
    );

    // The agent link works too, and a space id with --key.
    const agent = user();
    expect((await agent.run(['join', invitation.agentLink, '--name', 'Bot'])).code).toBe(0);
    const third = user();
    const byId = await third.run([
      'join',
      body.spaceId,
      '--key',
      invitation.publicInvitationKey,
      '--name',
      'Cy',
      '-q',
    ]);
    expect(byId.code).toBe(0);
    expect(byId.stdout.trim()).toMatch(/^[0-9a-f-]{36}$/);
    const noKey = await third.run(['join', body.spaceId]);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('--key');
  });

  it('takes the start of a name, and suggests a name, in any case and without its accents (zoe for Zoë Éclair)', async () => {
    const host = user();
    expect((await host.run(['space', 'create', 'Accents'])).code).toBe(0);
    await joinAs(host, user(), 'Zoë Éclair');
    await joinAs(host, user(), 'Ada');
    const muted = await host.run(['mute', 'zoe']);
    expect(muted.code, muted.stderr).toBe(0);
    expect(muted.stderr).toContain('Zoë Éclair');
    const unmuted = await host.run(['unmute', 'ZOE E']);
    expect(unmuted.code, unmuted.stderr).toBe(0);
    const statuses = (await host.run(['participants', '--json'])).json().map((p: any) => [p.name, p.status]);
    expect(statuses).toContainEqual(['Zoë Éclair', 'active']);
    // A typo of the whole name, typed without accents: the name it may have meant.
    const typo = await host.run(['unmute', 'zoe eclairxx']);
    expect(typo.code).toBe(5);
    expect(typo.stderr).toContain('Did you mean "Zoë Éclair"?');
    // --mention takes the start too.
    const sent = await host.run(['send', 'Over to you', '--mention', 'zoe', '--json']);
    expect(sent.code, sent.stderr).toBe(0);
    const zoe = (await host.run(['participants', '--json'])).json().find((p: any) => p.name === 'Zoë Éclair');
    expect(sent.json().mentions).toEqual([zoe.participantId]);
  });

  it('shows a joiner the space’s description and agenda, as space create --help says', async () => {
    const owner = user();
    const created = await owner.run([
      'space',
      'create',
      'Briefed',
      '-d',
      'Plan the 2.0 release',
      '--agenda',
      '1. dates\n2. risks',
    ]);
    expect(created.code).toBe(0);
    const guest = user();
    const { humanLink } = (await owner.run(['invite', '--json'])).json();
    const joined = await guest.run(['join', humanLink, '--name', 'Ada']);
    expect(joined.code).toBe(0);
    expect(joined.stdout).toMatch(/^description +Plan the 2\.0 release$/m);
    // Each line of the agenda under the one before, in the value's column.
    expect(joined.stdout).toMatch(/^agenda +1\. dates\n +2\. risks$/m);
    // Nothing of what is not set.
    const bare = user();
    expect((await bare.run(['space', 'create', 'Bare'])).code).toBe(0);
    const { humanLink: bareLink } = (await bare.run(['invite', '--json'])).json();
    const plain = await user().run(['join', bareLink, '--name', 'Bo']);
    expect(plain.code).toBe(0);
    expect(plain.stdout).not.toMatch(/^(description|agenda)/m);
    expect((await owner.run(['space', 'create', '--help'])).stdout).toContain(
      'the agenda, shown to everyone who joins',
    );
  });

  it('prints a join command that works as printed, also typed by the owner’s own account', async () => {
    const owner = user();
    const { spaceId, ownerPrivateKey } = (await owner.run(['space', 'create', 'Desk', '--json'])).json();
    const invite = await owner.run(['invite']);
    expect(invite.code).toBe(0);
    const command = invite.stderr.match(/joins with: (.+)$/m)?.[1];
    expect(command).toMatch(
      /^XDG_CONFIG_HOME=~\/\.config\/ada convene join "http:\/\/\S+\/join\/\S+" --name Ada --human$/,
    );
    // A shell of the same user (same HOME, same environment) runs it, with `convene` on the PATH.
    const bin = join(owner.home, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'convene'), `#!/bin/sh\nexec "${process.execPath}" "${bundle}" "$@"\n`);
    chmodSync(join(bin, 'convene'), 0o755);
    const env: NodeJS.ProcessEnv = { ...process.env, ...owner.env, PATH: `${bin}:${process.env.PATH}` };
    for (const name of LEAKY_ENV) delete env[name];
    const joined = await finished(spawn('sh', ['-c', command!], { cwd: owner.home, env }));
    expect(joined.stderr).not.toContain('✗');
    expect(joined.code).toBe(0);
    const ada = JSON.parse(readFileSync(join(owner.home, '.config/ada/convene/credentials.json'), 'utf8'));
    expect(ada.hosts[server.url].spaces[spaceId]).toMatchObject({ role: 'participant', name: 'Desk' });
    expect(owner.credentials().hosts[server.url].spaces[spaceId]).toMatchObject({
      role: 'owner',
      key: ownerPrivateKey,
    });
  });

  it('refuses a join that would replace the owner key, and explains a wrong or cut invitation', async () => {
    const owner = user();
    const { spaceId, ownerPrivateKey } = (await owner.run(['space', 'create', 'Mine', '--json'])).json();
    const { humanLink, publicInvitationKey } = (await owner.run(['invite', '--json'])).json();
    // The owner trying the walkthrough's second terminal on the same machine keeps the owner key.
    const self = await owner.run(['join', humanLink, '--name', 'Me again']);
    expect(self.code).toBe(6);
    expect(self.stderr).toContain('you own "Mine" on this machine');
    expect(self.stderr).toContain('XDG_CONFIG_HOME=');
    expect(owner.credentials().hosts[server.url].spaces[spaceId]).toMatchObject({
      role: 'owner',
      key: ownerPrivateKey,
    });
    const people = (await owner.run(['participants', '--json'])).json();
    expect(people.map((p: any) => p.name)).not.toContain('Me again');

    const guest = user();
    const wrongKey = await guest.run(['join', spaceId, '--key', `${publicInvitationKey}x`, '--name', 'Eve']);
    expect(wrongKey.code).toBe(4);
    expect(wrongKey.stderr).toContain('Ask the owner for a fresh one (`convene invite`)');
    // --json: the HTTP status beside the exit code, as the README's error shape says.
    const wrongKeyJson = await guest.run(['join', spaceId, '--key', `${publicInvitationKey}x`, '--json']);
    expect(JSON.parse(wrongKeyJson.stderr)).toMatchObject({ code: 'key_unknown', status: 401, exitCode: 4 });
    const cut = await guest.run(['join', humanLink.split('#')[0], '--name', 'Eve', '--json']);
    expect(cut.code).toBe(2);
    expect(JSON.parse(cut.stderr)).toMatchObject({
      error: expect.stringContaining('is not a whole invitation link'),
      exitCode: 2,
    });
    // A key pasted where the link goes is said to be one, and never repeated (output lands in logs).
    for (const key of [publicInvitationKey, ownerPrivateKey]) {
      const pasted = await guest.run(['join', key, '--name', 'Eve']);
      expect(pasted.code).toBe(2);
      expect(pasted.stderr).toContain('that is a key, not an invitation link');
      expect(pasted.stderr).not.toContain(key);
    }
    // Nothing was saved.
    expect(existsSync(join(guest.env.XDG_CONFIG_HOME!, 'convene/credentials.json'))).toBe(false);
  });

  it('says when CONVENE_URL or --url sends a join elsewhere than its link names: before it, and in its error', async () => {
    const owner = user();
    (await owner.run(['space', 'create', 'Over there', '--json'])).json();
    const { humanLink } = (await owner.run(['invite', '--json'])).json();
    // A CONVENE_URL left from another server (the newcomer's trial): it wins, as the README says,
    // and that server knows neither the space nor its invitation.
    const other = await startServer();
    try {
      const guest = file.user({ url: other.url });
      const joined = await guest.run(['join', humanLink, '--name', 'Ada']);
      // Its own answer (no such space there) and exit code, with where the link points.
      expect(joined.code).toBe(5);
      expect(joined.stderr).toContain('✗ space not found (the link names');
      expect(joined.stderr).toContain(
        `The link names ${server.url}, but CONVENE_URL sends this join to ${other.url}.`,
      );
      expect(joined.stderr).toContain(
        `(the link names ${server.url}, but CONVENE_URL sent the join to ${other.url})`,
      );
      expect(joined.stderr).toContain(
        `To join where the link points, unset CONVENE_URL (\`unset CONVENE_URL\`), or pass \`--url ${server.url}\`.`,
      );
      // --json: the warning, then the error with the other server's code.
      const json = await guest.run(['join', humanLink, '--name', 'Ada', '--json']);
      const [warning, error] = json.stderr
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(warning.warning).toContain(`The link names ${server.url}`);
      expect(error).toMatchObject({ status: 404, exitCode: 5 });
      expect(error.error).toContain(`CONVENE_URL sent the join to ${other.url}`);
      // --url is said as --url.
      const flagged = await user().run(['join', humanLink, '--name', 'Ada', '--url', other.url]);
      expect(flagged.code).toBe(5);
      expect(flagged.stderr).toContain(`but --url sent the join to ${other.url}`);
      expect(flagged.stderr).toContain(`leave out --url, or pass \`--url ${server.url}\``);
      // As the hint says: --url with the link's server joins it.
      const fixed = await guest.run(['join', humanLink, '--name', 'Ada', '--url', server.url]);
      expect(fixed.code).toBe(0);
      expect(fixed.stderr).not.toContain('The link names');
    } finally {
      await other.close();
    }
    // This machine under another of its names is the same server: nothing to say.
    const alias = await user().run(['join', humanLink.replace('127.0.0.1', 'localhost'), '--name', 'Bo']);
    expect(alias.code).toBe(0);
    expect(alias.stderr).not.toContain('The link names');
  });

  it('remembers the server a join went to when --url named it (a proxy): the next commands use it', async () => {
    const owner = user();
    (await owner.run(['space', 'create', 'Behind a proxy', '--json'])).json();
    const { humanLink } = (await owner.run(['invite', '--json'])).json();
    const proxy = await scriptedProxy(server.url, /^$/);
    try {
      // No CONVENE_URL: only --url names the proxy, on the join alone.
      const guest = file.user({ url: undefined });
      const joined = await guest.run(['join', humanLink, '--name', 'Pat', '--url', proxy.url]);
      expect(joined.code).toBe(0);
      expect(guest.credentials().url).toBe(proxy.url);
      // Without --url, the next commands go where the join went and find its key there.
      const sent = await guest.run(['send', 'through the proxy']);
      expect({ code: sent.code, stderr: sent.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
      const whoami = await guest.run(['whoami', '--json']);
      expect(whoami.json()).toMatchObject({ url: proxy.url, spaces: 1 });
      const read = (await owner.run(['messages', '--json'])).json();
      expect(read.map((m: any) => m.content)).toContain('through the proxy');
    } finally {
      await proxy.close();
    }
  });

  it('remembers the server of a space created or chosen with --url, as a join does: the next commands act on it', async () => {
    // No CONVENE_URL: only --url names the server, on the create alone.
    const ada = file.user({ url: undefined });
    const created = (await ada.run(['space', 'create', 'Elsewhere', '--url', server.url, '--json'])).json();
    expect(ada.credentials().url).toBe(server.url);
    // `space create` says the space is now the default: `send` without --url acts on it.
    const sent = await ada.run(['send', 'no --url needed']);
    expect({ code: sent.code, stderr: sent.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    const read = (await ada.run(['messages', '--json', '--url', server.url])).json();
    expect(read.map((m: any) => m.content)).toContain('no --url needed');

    // `space use --url` makes that server's space the default, and the server the next commands'.
    const proxy = await scriptedProxy(server.url, /^$/);
    try {
      const made = await ada.run(['space', 'create', 'Via proxy', '--url', proxy.url]);
      expect(made.code).toBe(0);
      // Elsewhere was the default of another server: not said replaced, nor how to go back to it.
      expect(made.stderr).not.toContain('instead of');
      expect(made.stderr).not.toContain('the default again');
      expect(ada.credentials().url).toBe(proxy.url);
      const there = (await ada.run(['space', 'show', '--json'])).json();
      expect(there.name).toBe('Via proxy');
      expect((await ada.run(['space', 'use', 'Elsewhere', '--url', server.url])).code).toBe(0);
      expect(ada.credentials().url).toBe(server.url);
      expect((await ada.run(['space', 'show', '--json'])).json().spaceId).toBe(created.spaceId);
    } finally {
      await proxy.close();
    }
  });

  it('refuses a second join of a space whose participant key still works (exit 6); a dead key may be replaced', async () => {
    const owner = user();
    const { spaceId } = (await owner.run(['space', 'create', 'Once', '--json'])).json();
    const { humanLink } = (await owner.run(['invite', '--json'])).json();
    const ada = user();
    const first = (await ada.run(['join', humanLink, '--name', 'Ada', '--json'])).json();
    const again = await ada.run(['join', humanLink, '--name', 'Ada']);
    expect(again.code).toBe(6);
    expect(again.stderr).toContain('you are already in "Once" as Ada on this machine');
    expect(again.stderr).toContain('`XDG_CONFIG_HOME=~/.config/ada convene join …`');
    expect(again.stderr).toContain('`convene leave "Once"`');
    // Whose configuration directory is the example's is shown another one.
    const inAdas = user();
    inAdas.env.XDG_CONFIG_HOME = join(inAdas.home, '.config/ada');
    expect((await inAdas.run(['join', humanLink, '--name', 'Ada in hers'])).code).toBe(0);
    const hers = await inAdas.run(['join', humanLink, '--name', 'Ada in hers']);
    expect(hers.code).toBe(6);
    expect(hers.stderr).toContain('`XDG_CONFIG_HOME=~/.config/grace convene join …`');
    expect(ada.credentials().hosts[server.url].spaces[spaceId].key).toBe(first.participantPrivateKey);
    const adas = async () =>
      (await owner.run(['participants', '--json'])).json().filter((p: any) => p.name === 'Ada');
    expect(await adas()).toHaveLength(1);
    // Muted, she is still in: refused as well.
    expect((await owner.run(['mute', 'Ada'])).code).toBe(0);
    expect((await ada.run(['join', humanLink, '--name', 'Ada'])).code).toBe(6);

    // Removed, her key is dead: joining again replaces it.
    const removed = await owner.run(['kick', 'Ada']);
    expect(removed.code).toBe(0);
    expect(removed.stderr).toContain('Removed Ada from Once');
    // doctor says why her default space's key is dead in the server's words, without its status,
    // and what to do of it, as a command on the space does.
    const doctor = await ada.run(['doctor']);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toContain(
      '✗ default space: Once: this key no longer works: its participant was removed from this space\n',
    );
    expect(doctor.stdout).toContain('The owner removed you. `convene leave "Once"` forgets the space here');
    const back = await ada.run(['join', humanLink, '--name', 'Ada', '--json']);
    expect(back.code).toBe(0);
    expect(back.json().participantPrivateKey).not.toBe(first.participantPrivateKey);
    expect(ada.credentials().hosts[server.url].spaces[spaceId].key).toBe(back.json().participantPrivateKey);
    expect((await adas()).map((p: any) => p.status).sort()).toEqual(['active', 'kicked']);
  });

  it('refuses a second join of a space whose key is saved under the other name of this machine (localhost, 127.0.0.1)', async () => {
    const owner = user();
    const { spaceId } = (await owner.run(['space', 'create', 'Spelt twice', '--json'])).json();
    const { humanLink } = (await owner.run(['invite', '--json'])).json();
    const { port } = new URL(server.url);
    const eve = user();
    const first = await eve.run(['join', humanLink, '--name', 'Eve', '--url', `http://127.0.0.1:${port}`]);
    expect(first.code).toBe(0);
    const again = await eve.run(['join', humanLink, '--name', 'Eve', '--url', `http://localhost:${port}`]);
    expect({ code: again.code, stderr: again.stderr }).toEqual({
      code: 6,
      stderr: expect.stringContaining('you are already in "Spelt twice" as Eve on this machine'),
    });
    const eves = (await owner.run(['participants', '--json'])).json().filter((p: any) => p.name === 'Eve');
    expect(eves).toHaveLength(1);
    // One key, under the spelling it was saved with.
    expect(
      Object.keys(eve.credentials().hosts).filter((h) => eve.credentials().hosts[h].spaces[spaceId]),
    ).toEqual([`http://127.0.0.1:${port}`]);
  });

  it('saves an owner or participant key obtained elsewhere (space use --key), checked first, never over a working one', async () => {
    const owner = user();
    const { spaceId, ownerPrivateKey } = (await owner.run(['space', 'create', 'Handed', '--json'])).json();
    const { publicInvitationKey } = (await owner.run(['invite', '--json'])).json();
    // An agent joins over REST and hands its key to a human, who drives it from the terminal.
    const joined = await fetch(`${server.url}/hub/space/${spaceId}/join`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-private-key': publicInvitationKey },
      body: JSON.stringify({ name: 'Agent' }),
    });
    const { participantPrivateKey, participantId } = (await joined.json()) as {
      participantPrivateKey: string;
      participantId: string;
    };
    const human = user();
    const saved = () =>
      existsSync(join(human.env.XDG_CONFIG_HOME!, 'convene/credentials.json'))
        ? human.credentials().hosts[server.url]?.spaces[spaceId]
        : undefined;

    // A space key given to join says what saves it.
    const asInvitation = await human.run(['join', spaceId, '--key', ownerPrivateKey, '--name', 'Bob']);
    expect(asInvitation.code).toBe(4);
    expect(asInvitation.stderr).toContain(
      `That is a space key (its owner's or a participant's), not an invitation: \`convene space use ${spaceId} --key KEY\` saves it here`,
    );
    // What is no owner's or participant's key is refused, and nothing saved.
    const invitation = await human.run(['space', 'use', spaceId, '--key', publicInvitationKey]);
    expect(invitation.code).toBe(2);
    expect(invitation.stderr).toContain('that is an invitation key of "Handed"');
    expect(invitation.stderr).toContain(`convene join ${spaceId} --key KEY`);
    const unknown = await human.run(['space', 'use', spaceId, '--key', 'f'.repeat(64)]);
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toContain(`${server.url} does not take this key for space ${spaceId}`);
    const nowhere = await human.run([
      'space',
      'use',
      '1b2c3d4e-0000-4000-8000-000000000000',
      '--key',
      participantPrivateKey,
    ]);
    expect(nowhere.code).toBe(5);
    expect(nowhere.stderr).toContain('no space 1b2c3d4e-0000-4000-8000-000000000000');
    const empty = await human.run(['space', 'use', spaceId, '--key', '-'], { input: '\n' });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('nothing came on stdin: no key to save');
    // What cannot be a key is said as that, before any request: a JSON document, a pasted quote.
    for (const bad of [`{"key": "${participantPrivateKey}"}\n{}`, `“${participantPrivateKey}”`]) {
      const refused = await human.run(['space', 'use', spaceId, '--key', '-'], { input: bad });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('that is not a space key');
    }
    // A name or the start of an id names only spaces saved here: with --key, the whole id.
    const byName = await human.run(['space', 'use', 'Handed', '--key', participantPrivateKey]);
    expect(byName.code).toBe(2);
    expect(byName.stderr).toContain('with --key, name the space by its whole id');
    expect(saved()).toBeUndefined();

    // Piped in, it is checked, saved as whose it is, and made the default space.
    // Hex in any case, with a byte-order mark and blanks around it, is the key.
    const piped = await human.run(['space', 'use', spaceId, '--key', '-'], {
      input: `\uFEFF ${participantPrivateKey.toUpperCase()}\r\n`,
    });
    expect(piped.code).toBe(0);
    expect(piped.stderr).toContain('Saved your participant key for Handed, as Agent');
    expect(saved()).toMatchObject({
      key: participantPrivateKey,
      role: 'participant',
      participantId,
      name: 'Handed',
    });
    expect((await human.run(['send', 'from the terminal'])).code).toBe(0);
    const said = (await owner.run(['messages', '--json'])).json();
    expect(said.map((m: any) => [m.senderName, m.content])).toContainEqual(['Agent', 'from the terminal']);
    const again = await human.run(['space', 'use', spaceId, '--key', participantPrivateKey, '--json']);
    expect(again.code).toBe(0);
    expect(again.json()).toMatchObject({
      role: 'participant',
      participantId,
      url: server.url,
      alreadySaved: true,
    });

    // Another key would lose the one that works: refused, the saved key kept.
    const over = await human.run(['space', 'use', spaceId, '--key', ownerPrivateKey]);
    expect(over.code).toBe(6);
    expect(over.stderr).toContain('this machine holds a working participant key for "Handed" (Agent)');
    expect(over.stderr).toContain('`convene leave "Handed"');
    // Another configuration directory remembers no server: the line it suggests names this one.
    expect(over.stderr).toContain(
      `To keep both, save the other in a configuration directory of its own, e.g. \`XDG_CONFIG_HOME=~/.config/ada convene space use ${spaceId} --key - --url ${server.url}\``,
    );
    expect(saved().key).toBe(participantPrivateKey);
    // The same seat saved under this machine's other name for the server (localhost, 127.0.0.1).
    const alias = new URL(server.url);
    alias.hostname = alias.hostname === 'localhost' ? '127.0.0.1' : 'localhost';
    const aliasUrl = alias.toString().replace(/\/$/, '');
    const twice = user();
    expect(
      (await twice.run(['space', 'use', spaceId, '--key', participantPrivateKey, '--url', aliasUrl])).code,
    ).toBe(0);
    expect(twice.credentials().hosts[aliasUrl].spaces[spaceId].key).toBe(participantPrivateKey);
    // Once it is dead (the agent removed), the owner's key takes its place; the removed key, given
    // again, is said to be real but its seat gone.
    expect((await owner.run(['kick', 'Agent', '--yes'])).code).toBe(0);
    const owned = await human.run(['space', 'use', spaceId, '--key', ownerPrivateKey]);
    expect(owned.code).toBe(0);
    expect(owned.stderr).toContain(
      'Saved your owner key for Handed, as Owner, in place of the one that no longer works',
    );
    expect(saved()).toMatchObject({ key: ownerPrivateKey, role: 'owner' });
    expect(
      (await human.run(['space', 'use', spaceId, '--key', ownerPrivateKey, '--json'])).json(),
    ).toMatchObject({
      role: 'owner',
      alreadySaved: true,
    });
    expect((await human.run(['space', 'update', '--agenda', 'driven from the terminal'])).code).toBe(0);
    // The dead key under the other spelling goes in the same write: one key for the space, not two.
    const aliased = await twice.run(['space', 'use', spaceId, '--key', ownerPrivateKey]);
    expect(aliased.stderr).toContain('in place of the one that no longer works');
    expect(twice.credentials().hosts[aliasUrl]?.spaces[spaceId]).toBeUndefined();
    expect(twice.credentials().hosts[server.url].spaces[spaceId].key).toBe(ownerPrivateKey);
    // An invitation link names its server, asked when no --url or CONVENE_URL says another, and
    // remembered for the next commands.
    const { humanLink } = (await owner.run(['invite', '--json'])).json();
    const fresh = file.user({ url: undefined });
    const linked = await fresh.run(['space', 'use', humanLink, '--key', ownerPrivateKey, '--json']);
    expect(linked.code).toBe(0);
    expect(linked.json()).toMatchObject({ spaceId, role: 'owner', url: server.url });
    expect((await fresh.run(['space', 'show', '--json'])).json().agenda).toBe('driven from the terminal');
    const removed = await user().run(['space', 'use', spaceId, '--key', participantPrivateKey]);
    expect(removed.code).toBe(4);
    expect(removed.stderr).toContain('The key was real, but its seat is gone');
    // Given to join instead, it is said to be no invitation.
    const rejoin = await user().run(['join', spaceId, '--key', participantPrivateKey, '--name', 'Again']);
    expect(rejoin.code).toBe(4);
    expect(rejoin.stderr).toContain(
      'That is the key of a participant who is no longer in the space, not an invitation',
    );
    // By an invitation link, once the space is closed: over, exit 6.
    expect((await owner.run(['space', 'close', '--yes'])).code).toBe(0);
    const closed = await user().run(['space', 'use', humanLink, '--key', ownerPrivateKey]);
    expect(closed.code).toBe(6);
    expect(closed.stderr).toContain(`space ${spaceId} is over`);
  });

  it('prints the key saved for a space (space key), which space use --key saves on another machine', async () => {
    const owner = user();
    const { spaceId, ownerPrivateKey, ownerId } = (
      await owner.run(['space', 'create', 'Seat', '--json'])
    ).json();
    // space create, which does not print the key it keeps, names the command that does.
    const other = await owner.run(['space', 'create', 'Other seat']);
    const otherId = Object.keys(owner.credentials().hosts[server.url].spaces).find((id) => id !== spaceId)!;
    expect(other.stderr).toContain(`\`convene space key ${otherId}\` prints it back`);
    expect((await owner.run(['space', 'key', otherId])).stdout).toBe(
      `${owner.credentials().hosts[server.url].spaces[otherId].key}\n`,
    );
    expect((await owner.run(['space', 'use', 'Seat'])).code).toBe(0);
    const printed = await owner.run(['space', 'key']);
    expect({ code: printed.code, stdout: printed.stdout, stderr: printed.stderr }).toEqual({
      code: 0,
      stdout: `${ownerPrivateKey}\n`,
      stderr: '',
    });
    expect((await owner.run(['space', 'key', 'seat', '--json'])).json()).toEqual({
      spaceId,
      name: 'Seat',
      role: 'owner',
      participantId: ownerId,
      key: ownerPrivateKey,
      url: server.url,
    });
    const unknown = await owner.run(['space', 'key', 'Nosuch']);
    expect(unknown.code).toBe(5);
    expect(unknown.stdout).toBe('');
    // Handed over as a pipe would (`convene space key | ssh … convene space use ID --key -`).
    const laptop = user();
    const used = await laptop.run(['space', 'use', spaceId, '--key', '-', '-q'], { input: printed.stdout });
    expect({ code: used.code, stdout: used.stdout }).toEqual({ code: 0, stdout: `${spaceId}\n` });
    expect((await laptop.run(['space', 'update', '--agenda', 'from the laptop'])).code).toBe(0);
    expect((await owner.run(['space', 'show', '--json'])).json().agenda).toBe('from the laptop');
  });

  it('waits through approval in a private space; the owner approves by name', async () => {
    const owner = user();
    (await owner.run(['space', 'create', 'Private room', '--private'])).code;
    const { humanLink } = (await owner.run(['invite', '--json'])).json();
    const guest = user();
    const joining = guest.run(['join', humanLink, '--name', 'Grace', '--json'], { timeoutMs: 60_000 });
    // The owner sees Grace waiting, then approves her by name.
    await expect
      .poll(
        async () => (await owner.run(['participants', '--json'])).json().map((p: any) => [p.name, p.status]),
        { timeout: 20_000 },
      )
      .toContainEqual(['Grace', 'waitingForApproval']);
    // In the API's word, as --json has it.
    expect((await owner.run(['participants'])).stdout).toMatch(/^Grace +\S+ +waitingForApproval +agent/m);
    const approved = await owner.run(['approve', 'grace']);
    expect(approved.code).toBe(0);
    expect(approved.stderr).toContain('Approved Grace');
    const joined = await joining;
    expect(joined.code).toBe(0);
    expect(joined.json().participantPrivateKey).toMatch(/^[0-9a-f]{64}$/);
    expect((await guest.run(['send', 'thanks'])).code).toBe(0);
  });

  it('reject leaves someone admitted meanwhile, elsewhere: the server decides as it kicks, and it is said so (exit 6)', async () => {
    // The owner's other session approves Ray between reject's read (Ray waiting) and its kick.
    const proxy = await scriptedProxy(
      server.url,
      /^POST \/hub\/space\/[0-9a-f-]{36}\/participants\/[0-9a-f-]{36}\/kick$/,
      'admit',
    );
    try {
      const owner = file.user({ url: proxy.url });
      await owner.run(['space', 'create', 'Raced', '--private']);
      const { humanLink } = (await owner.run(['invite', '--json'])).json();
      const guest = user();
      const joining = guest.run(['join', humanLink, '--name', 'Ray', '--json'], { timeoutMs: 60_000 });
      await waitingForApproval(owner, 'Ray');
      const rejected = await owner.run(['reject', 'Ray']);
      expect(rejected.code).toBe(6);
      expect(rejected.stderr).toContain('✗ Ray is no longer waiting for approval; nothing refused');
      expect(rejected.stderr).toContain(
        'Ray was admitted meanwhile and stays (status active). To remove them, `convene kick "Ray"',
      );
      // Admitted, not kicked: their join ends with their key.
      const joined = await joining;
      expect(joined.code).toBe(0);
      expect(joined.json().participantPrivateKey).toMatch(/^[0-9a-f]{64}$/);
    } finally {
      await proxy.close();
    }
  });

  it('tells a joiner the owner refused it when kicked while waiting (exit 4), not that the invitation is wrong', async () => {
    const owner = user();
    await owner.run(['space', 'create', 'Selective', '--private']);
    const { humanLink } = (await owner.run(['invite', '--json'])).json();
    const guest = user();
    const joining = guest.run(['join', humanLink, '--name', 'Eve'], { timeoutMs: 60_000 });
    await waitingForApproval(owner, 'Eve');
    const tail = follow(owner, ['tail']);
    // Asked before tail started: said as where things stand, with no time (see tail.test.ts).
    await tail.waitFor('Eve is waiting to join');
    // Kicking someone waiting refuses them, as reject does: said so, here and in tail.
    const kicked = await owner.run(['kick', 'Eve']);
    expect(kicked.code).toBe(0);
    expect(kicked.stderr).toContain('Refused Eve’s request to join Selective');
    await tail.waitFor(/Eve was refused$/m);
    expect(tail.stdout()).not.toContain('Eve was removed');
    expect((await tail.interrupt()).code).toBe(0);
    const refused = await joining;
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain('✗ the owner refused your request to join\n');
    // One thing, the one the joiner asked about: not also that they were removed.
    expect(refused.stderr).not.toContain('removed');
    expect(refused.stderr).not.toContain('mistyped');
    expect(guest.credentials().hosts[server.url].pendingJoins).toEqual({});

    // `reject` says it plainly, and applies only to someone waiting.
    const rex = user();
    const rexJoining = rex.run(['join', humanLink, '--name', 'Rex', '--json'], { timeoutMs: 60_000 });
    await waitingForApproval(owner, 'Rex');
    const rejected = await owner.run(['reject', 'Rex']);
    expect(rejected.code).toBe(0);
    expect(rejected.stderr).toContain('Refused Rex’s request to join Selective');
    const rexRefused = await rexJoining;
    expect(rexRefused.code).toBe(4);
    // With --json, the server's code and status, as every refusal carries them.
    expect(JSON.parse(rexRefused.stderr.trim().split('\n').at(-1)!)).toEqual({
      error: 'the owner refused your request to join',
      code: 'join_refused',
      status: 404,
      hint: expect.any(String),
      exitCode: 4,
    });
    // Again: the status is kicked, as for anyone removed, and reject says both, not "kicked" alone.
    const again = await owner.run(['reject', 'Rex']);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain(
      'Rex was already refused or removed from Selective (status kicked); nothing changed.',
    );
    expect((await owner.run(['reject', 'Rex', '--json'])).json()).toMatchObject({ unchanged: true });
    expect((await owner.run(['kick', 'Rex'])).stderr).toContain('Rex was already kicked from Selective');
  });

  it('resumes a join stopped with Ctrl-C while it waited, without asking twice, by the same link or a fresh one', async () => {
    const owner = user();
    await owner.run(['space', 'create', 'Patient room', '--private']);
    const { agentLink } = (await owner.run(['invite', '--json'])).json();
    const guest = user();
    const join = follow(guest, ['join', agentLink, '--name', 'Pat']);
    await eventually(async () =>
      expect((await owner.run(['participants', '--json'])).json().map((p: any) => p.name)).toContain('Pat'),
    );
    const stopped = await join.interrupt();
    expect(stopped.code).toBe(130);
    // Off a terminal too, the log says what it waited for.
    expect(stopped.stderr).toContain('Waiting for the owner to approve you…');
    expect(stopped.stderr).toContain('run the same `convene join` again');
    expect(Object.keys(guest.credentials().hosts[server.url].pendingJoins)).toHaveLength(1);

    // Again by a fresh link of the space, under the same name: the same request, waited for again.
    const fresh = (await owner.run(['invite', '--json'])).json().agentLink;
    expect(fresh).not.toBe(agentLink);
    const again = follow(guest, ['join', fresh, '--name', 'Pat']);
    await again.waitFor('Waiting for the owner to approve you', { in: 'stderr' });
    expect((await again.interrupt()).code).toBe(130);
    const waiting = (await owner.run(['participants', '--json'])).json().filter((p: any) => p.name === 'Pat');
    expect(waiting).toHaveLength(1);

    expect((await owner.run(['approve', 'Pat'])).code).toBe(0);
    const resumed = await guest.run(['join', fresh, '--name', 'Pat', '--json'], { timeoutMs: 60_000 });
    expect(resumed.code).toBe(0);
    expect(resumed.json().participantPrivateKey).toMatch(/^[0-9a-f]{64}$/);
    expect(guest.credentials().hosts[server.url].pendingJoins).toEqual({});
    const names = (await owner.run(['participants', '--json'])).json().map((p: any) => p.name);
    expect(names.filter((n: string) => n === 'Pat')).toHaveLength(1);
  });

  it('says namesakes all kicked already kicked (exit 0, unchanged), not ambiguous', async () => {
    const owner = user();
    await owner.run(['space', 'create', 'Twice kicked']);
    const { humanLink } = (await owner.run(['invite', '--json'])).json();
    const ids: string[] = [];
    for (const _ of [1, 2]) {
      const critic = user();
      ids.push((await critic.run(['join', humanLink, '--name', 'Critic', '--json'])).json().participantId);
    }
    for (const id of ids) expect((await owner.run(['kick', id, '--yes'])).code).toBe(0);
    const again = await owner.run(['kick', 'Critic', '--yes']);
    expect({ code: again.code, stderr: again.stderr }).toEqual({
      code: 0,
      stderr: expect.stringContaining('Critic was already kicked from Twice kicked; nothing changed.'),
    });
    const json = (await owner.run(['kick', 'critic', '--yes', '--json'])).json();
    expect(json).toMatchObject({ ok: true, unchanged: true });
    expect(ids).toContain(json.participantId);
    // Two of the name still in the space stay ambiguous: which one is meant matters.
    const active = user();
    await active.run(['join', humanLink, '--name', 'Reader']);
    const other = user();
    await other.run(['join', humanLink, '--name', 'Reader']);
    const which = await owner.run(['mute', 'Reader']);
    expect(which.code).toBe(2);
    expect(which.stderr).toContain('2 participants are called "Reader"');
  });

  it('mutes, unmutes and kicks by name or id; the owner verbs need the owner key', async () => {
    const owner = user();
    await owner.run(['space', 'create', 'Moderated']);
    const { humanLink } = (await owner.run(['invite', '--json'])).json();
    const guest = user();
    const { participantId } = (await guest.run(['join', humanLink, '--name', 'Mallory', '--json'])).json();

    expect((await owner.run(['mute', 'Mallory'])).code).toBe(0);
    const muted = await guest.run(['send', 'can I talk?']);
    expect(muted.code).toBe(4);
    expect(muted.stderr).toContain('muted');
    const mutedJson = await guest.run(['send', 'can I talk?', '--json']);
    expect(JSON.parse(mutedJson.stderr)).toMatchObject({
      code: 'participant_muted',
      status: 403,
      exitCode: 4,
    });
    // In the CLI's words: documents, not the API's artifacts.
    const mutedCreate = await guest.run(['artifact', 'create', 'notes.md'], { input: '# Notes\n' });
    expect(mutedCreate.code).toBe(4);
    expect(mutedCreate.stderr).toContain('a muted participant cannot create documents');
    expect(mutedCreate.stderr).not.toContain('artifacts');
    const mutedAgain = await owner.run(['mute', 'Mallory']);
    expect(mutedAgain.code).toBe(0);
    expect(mutedAgain.stderr).toContain('Mallory is already muted in Moderated; nothing changed.');
    expect((await owner.run(['unmute', participantId.slice(0, 8)])).code).toBe(0);
    const unmutedAgain = await owner.run(['unmute', 'Mallory']);
    expect(unmutedAgain.code).toBe(0);
    expect(unmutedAgain.stderr).toContain('Mallory is already active in Moderated; nothing changed.');
    expect((await guest.run(['send', 'yes'])).code).toBe(0);

    // `reject` refuses a request to join: someone admitted is kicked, not rejected.
    const notWaiting = await owner.run(['reject', 'Mallory']);
    expect(notWaiting.code).toBe(6);
    expect(notWaiting.stderr).toContain('Mallory is not waiting for approval');
    expect(notWaiting.stderr).toContain(
      'Mallory’s status is active; only participants whose status is waitingForApproval can be refused',
    );
    expect(notWaiting.stderr).toContain('To remove them, `convene kick "Mallory"`.');
    expect((await guest.run(['send', 'still in'])).code).toBe(0);

    const notOwner = await guest.run(['kick', 'Owner']);
    expect(notOwner.code).toBe(4);
    expect(notOwner.stderr).toContain('only the owner');

    const unknown = await owner.run(['kick', 'Nobody']);
    expect(unknown.code).toBe(5);
    // Named with the space it looked in: the default one may not be the one meant.
    expect(unknown.stderr).toContain('no participant "Nobody" in Moderated');
    expect(unknown.stderr).toContain('convene participants');

    const kicked = await owner.run(['kick', participantId, '--json']);
    expect(kicked.code).toBe(0);
    expect(kicked.json()).toEqual({ ok: true, participantId });
    const after = await guest.run(['send', 'still here?']);
    expect(after.code).toBe(4);
    expect(after.stderr).toContain('convene join LINK');
    // Named, since `leave` off a terminal takes no default (and the hint may be copied elsewhere).
    // Told as a removal (the code participant_removed), not as "if you left or were removed".
    expect(after.stderr).toContain(
      'The owner removed you. `convene leave "Moderated"` forgets the space here',
    );
    // What coming back takes, as it is: an invitation link of the space (no new one is needed).
    expect(after.stderr).toContain(
      'to come back, join again with an invitation link of the space (`convene join LINK`), which the owner approves if the space is private.',
    );

    // Kicking again is done already: said so, exit 0, as any command finding its work done.
    const again = await owner.run(['kick', participantId]);
    expect(again.code).toBe(0);
    // In the API's word for the status, as `participants` shows it (kicked, not "removed").
    expect(again.stderr).toContain('Mallory was already kicked from Moderated; nothing changed.');
    const table = await owner.run(['participants']);
    expect(table.stdout).toMatch(/^Mallory +\S+ +kicked +agent/m);
    expect(table.stdout).not.toContain('removed');
    const againJson = await owner.run(['kick', participantId, '--json']);
    expect(againJson.json()).toEqual({ ok: true, participantId, unchanged: true });
    // The owner: the conflict says where they stand, not "retry".
    const ownerKick = await owner.run(['kick', 'Owner']);
    expect(ownerKick.code).toBe(6);
    expect(ownerKick.stderr).toContain('the owner of a space cannot be moderated');
    expect(ownerKick.stderr).toContain('To end the space for everyone, `convene space close`.');
    // Said once, not as the message and again as the hint.
    expect(ownerKick.stderr.match(/cannot be moderated/gi)).toHaveLength(1);
    // Refusing the owner is as impossible, and has the same way out.
    const ownerReject = await owner.run(['reject', 'Owner']);
    expect(ownerReject.code).toBe(6);
    expect(ownerReject.stderr).toContain('the owner of a space cannot be moderated');
    expect(ownerReject.stderr).toContain('To end the space for everyone, `convene space close`.');

    // A namesake who joins after the kick is the one a name means (the kicked one cannot be).
    const namesake = user();
    const { participantId: secondId } = (
      await namesake.run(['join', humanLink, '--name', 'Mallory', '--json'])
    ).json();
    const muteByName = await owner.run(['mute', 'Mallory', '--json']);
    expect(muteByName.code).toBe(0);
    expect(muteByName.json()).toEqual({ ok: true, participantId: secondId });

    const missing = await owner.run(['mute']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('missing participant to mute');
    expect(missing.stderr).toContain('Usage: convene mute PARTICIPANT [--space SPACE]\n');
    // The verbs that ask for confirmation name --yes in their usage line.
    const kickMissing = await owner.run(['kick']);
    expect(kickMissing.code).toBe(2);
    expect(kickMissing.stderr).toContain('Usage: convene kick PARTICIPANT [--space SPACE] [--yes]');
    const short = await owner.run(['mute', secondId.slice(0, 3)]);
    expect(short.code).toBe(5);
    expect(short.stderr).toContain('An id start needs 4 characters or more.');

    // A space past its time to live is closed, whatever the participant's standing.
    // Long enough for the invite and join processes on a loaded machine (3 s was not: the join
    // met the expired space, exit 6), then waited out from after its creation.
    const brief = user();
    const { spaceId: briefId } = (
      await brief.run(['space', 'create', 'Brief', '--ttl', '8s', '--json'])
    ).json();
    const expired = Date.now() + 8_200;
    await joinAs(brief, user(), 'Bea');
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expired - Date.now())));
    const late = await brief.run(['kick', 'Bea', '--space', briefId]);
    // Said as expired (the 409's code, space_expired), not as closed by its owner.
    expect(late.code).toBe(6);
    expect(late.stderr).toContain('"Brief" has expired: its keys no longer work');
    expect(late.stderr).toContain('convene leave');
  });

  it('lists a space past its time to live as expired, one its owner closed as closed (space list, whoami)', async () => {
    const keeper = user();
    expect((await keeper.run(['space', 'create', 'Shut'])).code).toBe(0);
    expect((await keeper.run(['space', 'close', '--yes'])).code).toBe(0);
    // Created last, it is the default (created first, it became the default when Shut closed only
    // if that took less than its second: on a loaded machine it had expired, and Shut stayed).
    expect((await keeper.run(['space', 'create', 'Fleeting', '--ttl', '1s'])).code).toBe(0);
    await eventually(async () =>
      expect(
        (await keeper.run(['space', 'list', '--json']))
          .json()
          .map((s: any) => [s.name, s.state])
          .sort(),
      ).toEqual([
        ['Fleeting', 'expired'],
        ['Shut', 'closed'],
      ]),
    );
    const table = (await keeper.run(['space', 'list'])).stdout;
    expect(table).toMatch(/Fleeting\s.*\sexpired\n/);
    expect(table).toMatch(/Shut\s.*\sclosed\n/);
    // The default as whoami shows it.
    expect((await keeper.run(['whoami', '--json'])).json().defaultSpace).toMatchObject({
      name: 'Fleeting',
      state: 'expired',
    });
    expect((await keeper.run(['whoami'])).stdout).toMatch(/space\s+Fleeting \(owner, default; expired\)\n/);
  });

  it('leaves a space: the key is forgotten and stops working', async () => {
    const owner = user();
    const { spaceId } = (await owner.run(['space', 'create', 'Leaving', '--json'])).json();
    const { humanLink } = (await owner.run(['invite', '--json'])).json();
    const guest = user();
    const { participantPrivateKey } = (
      await guest.run(['join', humanLink, '--name', 'Lea', '--json'])
    ).json();
    // Off a terminal nobody is asked: leaving the default space takes its name, or --yes.
    const unnamed = await guest.run(['leave']);
    expect(unnamed.code).toBe(2);
    expect(unnamed.stderr).toContain('✗ name the space to leave');
    expect(unnamed.stderr).toContain(
      'Usage: convene leave SPACE (or --yes alone to leave the default space)',
    );
    expect(guest.credentials().hosts[server.url].spaces[spaceId]).toBeDefined();
    const left = await guest.run(['leave', '--yes', '--json']);
    expect(left.code).toBe(0);
    expect(left.json()).toEqual({ ok: true });
    expect(guest.credentials().hosts[server.url].spaces[spaceId]).toBeUndefined();
    const response = await fetch(`${server.url}/hub/space/${spaceId}`, {
      headers: { 'x-private-key': participantPrivateKey },
    });
    expect(response.status).toBe(401);
    const people = (await owner.run(['participants', '--json'])).json();
    expect(people.find((p: any) => p.name === 'Lea').status).toBe('left');

    // The owner cannot leave: it closes the space instead, and keeps its key until then.
    const ownerLeaves = await owner.run(['leave', '--yes']);
    expect(ownerLeaves.code).toBe(6);
    expect(ownerLeaves.stderr).toContain('the owner cannot leave');
    // Closing keeps the space here, listed as closed, until `leave` forgets it: not "forgets it".
    expect(ownerLeaves.stderr).toContain(
      'Close it for good with `convene space close "Leaving"`: every key stops working, and convene keeps the space, listed as closed, until `convene leave "Leaving"` forgets it.',
    );
    expect(ownerLeaves.stderr).not.toContain('retry');
    // Said at once off a terminal too, without --yes or a name: the default space is the one meant.
    for (const args of [['leave'], ['leave', '--json']]) {
      const unnamedOwner = await owner.run(args);
      expect({ args, code: unnamedOwner.code }).toEqual({ args, code: 6 });
      expect(unnamedOwner.stderr).toContain('the owner cannot leave');
      expect(unnamedOwner.stderr).not.toContain('name the space');
    }
    expect(owner.credentials().hosts[server.url].spaces[spaceId].role).toBe('owner');
    // Closed, the owner's space is forgotten by a leave that names it (or --yes), as a participant's.
    expect((await owner.run(['space', 'close', '--yes'])).code).toBe(0);
    const closedUnnamed = await owner.run(['leave']);
    expect(closedUnnamed.code).toBe(2);
    expect(closedUnnamed.stderr).toContain('✗ name the space to leave');
    expect(owner.credentials().hosts[server.url].spaces[spaceId]).toBeDefined();
    const forgot = await owner.run(['leave', 'Leaving']);
    expect(forgot.code).toBe(0);
    expect(forgot.stderr).toContain('Forgot Leaving here: it was already closed');
    expect(owner.credentials().hosts[server.url].spaces[spaceId]).toBeUndefined();
  });

  it('says a space by the name its owner gave it since it was joined (leave, participants, errors)', async () => {
    const owner = user();
    const { spaceId } = (await owner.run(['space', 'create', 'Old name', '--json'])).json();
    const guest = user();
    await joinAs(owner, guest, 'Erin');
    const other = user();
    await joinAs(owner, other, 'Olaf');
    expect((await owner.run(['space', 'update', '--name', 'New name'])).code).toBe(0);
    // A participant's own leave asks the server first: "Left New name", and nothing saved of the old.
    const left = await guest.run(['leave', 'Old name', '--yes']);
    expect(left.code).toBe(0);
    expect(left.stderr).toContain('✓ Left New name');
    expect(left.stderr).not.toContain('Old name');
    // A command that reads the space anyway keeps its new name for what it says next, and after.
    const reading = await other.run(['participants']);
    expect(reading.code).toBe(0);
    expect(other.credentials().hosts[server.url].spaces[spaceId].name).toBe('New name');
    // An owner's command refused to a participant, before it reads anything: by the name it has now.
    expect((await owner.run(['space', 'update', '--name', 'Newer name'])).code).toBe(0);
    for (const args of [['invite'], ['approve', 'Erin'], ['space', 'update', '--agenda', 'x']]) {
      const refused = await other.run(args);
      expect({ args, code: refused.code }).toEqual({ args, code: 4 });
      expect(refused.stderr).toContain('only the owner of "Newer name"');
    }
    // With --json, the server's code for it, as a refusal by the server carries.
    expect(JSON.parse((await other.run(['mute', 'Erin', '--json'])).stderr)).toMatchObject({
      error: expect.stringContaining('only the owner of "Newer name"'),
      code: 'owner_key_required',
      exitCode: 4,
    });
    expect(other.credentials().hosts[server.url].spaces[spaceId].name).toBe('Newer name');
    expect((await owner.run(['space', 'close', '--yes'])).code).toBe(0);
    const closed = await other.run(['messages']);
    expect(closed.code).toBe(6);
    expect(closed.stderr).toContain('"Newer name" is closed');
  });

  it('leaves a space it was removed from: forgets the key the server refuses, says so, exit 0', async () => {
    const owner = user();
    const { spaceId } = (await owner.run(['space', 'create', 'Kicked out', '--json'])).json();
    const guest = user();
    await joinAs(owner, guest, 'Kim');
    expect((await owner.run(['kick', 'Kim'])).code).toBe(0);
    const listed = await guest.run(['space', 'list']);
    expect(listed.stdout).toContain(
      'key refused (removed, or left): `convene leave "Kicked out"` forgets it',
    );
    expect((await guest.run(['space', 'list', '--json'])).json()).toEqual([
      expect.objectContaining({ spaceId, state: 'unavailable', problem: expect.stringContaining('401') }),
    ]);
    // The listing's own hint, copied: it names the space, so it needs no terminal or --yes.
    const left = await guest.run(suggested(listed.stdout)[0]!);
    expect({ code: left.code, stderr: left.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    expect(left.stderr).toContain('Forgot Kicked out here: the server no longer takes its key');
    expect(guest.credentials().hosts[server.url].spaces[spaceId]).toBeUndefined();

    const other = user();
    const { spaceId: otherId } = (await other.run(['space', 'create', 'Kicked too', '--json'])).json();
    const guest2 = user();
    await joinAs(other, guest2, 'Kit');
    expect((await other.run(['kick', 'Kit'])).code).toBe(0);
    const json = await guest2.run(['leave', '--yes', '--json']);
    expect(json.code).toBe(0);
    expect(json.json()).toEqual({ ok: true, keyRefused: true });
    expect(guest2.credentials().hosts[server.url].spaces[otherId]).toBeUndefined();
  });

  it('refuses to leave a space its server says it does not have (maybe not the server that keeps it); leave --forget forgets it', async () => {
    const owner = user();
    const { spaceId } = (await owner.run(['space', 'create', 'Vanished', '--json'])).json();
    // As after its retention (or a server on a new database): the key saved for an id nobody has.
    const file = join(owner.env.XDG_CONFIG_HOME!, 'convene/credentials.json');
    const gone = crypto.randomUUID();
    writeFileSync(file, readFileSync(file, 'utf8').replaceAll(spaceId, gone), { mode: 0o600 });
    // Off a terminal, the owner's default space is forgotten only when named (or with --yes).
    const unnamed = await owner.run(['leave', '--forget']);
    expect(unnamed.code).toBe(2);
    expect(owner.credentials().hosts[server.url].spaces[gone]).toBeDefined();
    // A 404 from something that is not Convene (a proxy mid-deploy) says nothing of the space:
    // the key is kept.
    const proxy = createHttpServer((_req, res) =>
      res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>404</h1>'),
    );
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      const saved = owner.credentials();
      saved.hosts[proxyUrl] = saved.hosts[server.url];
      writeFileSync(file, JSON.stringify(saved), { mode: 0o600 });
      const refused = await owner.run(['--url', proxyUrl, 'leave', 'Vanished', '--yes']);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain('not a Convene server');
      expect(owner.credentials().hosts[proxyUrl].spaces[gone]).toBeDefined();
    } finally {
      proxy.close();
    }
    const read = await owner.run(['messages', '-s', 'Vanished']);
    expect(read.code).toBe(5);
    expect(read.stderr).toContain(`${server.url} does not have this space`);
    // Maybe not gone: a server started on other data answers at the same address. Leaving would
    // throw away a key that works on the right one; that is said before the leave.
    expect(read.stderr).toContain('or this is not the server that keeps it');
    expect(read.stderr).toContain('If so, start that one instead: your key still works there');
    const hinted = suggested(read.stderr).find((words) => words[0] === 'leave');
    expect(hinted).toEqual(['leave', 'Vanished', '--forget']);
    // doctor says the same of the default space, with the same next step.
    const doctor = await owner.run(['doctor', '--json']);
    expect(doctor.code).toBe(1);
    const check = doctor.json().checks.find((c: any) => c.name === 'default space');
    expect(check).toMatchObject({ status: 'fail', detail: expect.stringContaining('space not found') });
    expect(suggested(check.hint)).toContainEqual(['leave', 'Vanished', '--forget']);
    // A plain leave does not throw the key away on that word alone (it may be the only copy of an
    // owner key, which works on the server that keeps the space): the same error, exit 5, the
    // key kept.
    for (const args of [['leave', 'Vanished', '--yes'], ['leave', '--yes'], ['leave']]) {
      const refused = await owner.run(args);
      expect({ args, code: refused.code }).toEqual({ args, code: 5 });
      expect(refused.stderr).toContain('✗ space not found');
      expect(refused.stderr).toContain('or this is not the server that keeps it');
      expect(refused.stderr).not.toContain('Forgot');
      expect(suggested(refused.stderr)).toContainEqual(['leave', 'Vanished', '--forget']);
      expect(owner.credentials().hosts[server.url].spaces[gone]).toBeDefined();
    }
    const json = await owner.run(['leave', 'Vanished', '--yes', '--json']);
    expect(json.code).toBe(5);
    expect(JSON.parse(json.stderr)).toMatchObject({ status: 404, exitCode: 5 });
    const left = await owner.run([...hinted!, '--yes', '--json']);
    expect({ code: left.code, json: left.json() }).toEqual({ code: 0, json: { ok: true, gone: true } });
    expect(owner.credentials().hosts[server.url].spaces[gone]).toBeUndefined();
  });

  it('says where a key is saved when the server is named by another loopback address', async () => {
    const owner = user();
    const { spaceId } = (await owner.run(['space', 'create', 'Aliased', '--json'])).json();
    const alias = server.url.replace('127.0.0.1', 'localhost');
    const read = await owner.run(['--url', alias, 'messages', '-s', 'Aliased']);
    expect(read.code).toBe(5);
    expect(read.stderr).toContain(`Your key for it is saved under ${server.url}`);
    expect(read.stderr).toContain(`--url ${server.url}`);
    // By its id, and the default space (nothing named), the same.
    for (const [args, whose] of [
      [['messages', '-s', spaceId], 'Your key for it is'],
      [['messages'], 'Your space keys are'],
    ] as const) {
      const other = await owner.run(['--url', alias, ...args]);
      expect(other.code).not.toBe(0);
      expect(other.stderr).toContain(`${whose} saved under ${server.url}`);
    }
    // The same address spelt the same way finds it.
    expect((await owner.run(['--url', server.url, 'messages', '-s', spaceId])).code).toBe(0);
  });

  it('leaves a closed space: forgets it here, says so, exit 0 (was refused as closed)', async () => {
    const owner = user();
    const { spaceId } = (await owner.run(['space', 'create', 'Wrapped up', '--json'])).json();
    const guest = user();
    await joinAs(owner, guest, 'Lou');
    const { spaceId: otherId } = (await guest.run(['space', 'create', 'Still open', '--json'])).json();
    expect((await owner.run(['space', 'close', 'Wrapped up'])).code).toBe(0);
    const left = await guest.run(['leave', 'Wrapped up', '--yes']);
    expect({ code: left.code, stderr: left.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    expect(left.stderr).toContain('Forgot Wrapped up here: it was already closed');
    const saved = guest.credentials().hosts[server.url];
    expect(saved.spaces[spaceId]).toBeUndefined();
    expect(saved.spaces[otherId]).toBeDefined();
    // Gone from the list; a second leave is the usual "no key" for its id (nothing left to forget).
    expect((await guest.run(['space', 'list', '--json'])).json().map((s: any) => s.spaceId)).toEqual([
      otherId,
    ]);
    expect((await guest.run(['leave', spaceId, '--yes'])).code).toBe(4);

    // --json says it was closed rather than left; the default space is forgotten with it.
    const other = user();
    (await other.run(['space', 'create', 'Closed too', '--json'])).json();
    const guest2 = user();
    await joinAs(other, guest2, 'Max');
    expect((await other.run(['space', 'close', 'Closed too'])).code).toBe(0);
    const json = await guest2.run(['leave', '--yes', '--json']);
    expect(json.code).toBe(0);
    expect(json.json()).toEqual({ ok: true, closed: true });
    expect(guest2.credentials().hosts[server.url].defaultSpace).toBeUndefined();
  });

  it('says of a key the server does not know (the file edited, another server) that it is that, not that the space closed', async () => {
    const owner = user();
    const { spaceId } = (await owner.run(['space', 'create', 'Open still', '--json'])).json();
    const guest = user();
    await joinAs(owner, guest, 'Kit');
    /** The saved key of the default space, one character changed: as a hand-edited file has it. */
    const corrupt = (who: User) => {
      const file = join(who.env.XDG_CONFIG_HOME!, 'convene/credentials.json');
      const saved = JSON.parse(readFileSync(file, 'utf8'));
      const space = saved.hosts[server.url].spaces[spaceId];
      space.key = `${space.key.slice(0, -1)}${space.key.endsWith('0') ? '1' : '0'}`;
      writeFileSync(file, JSON.stringify(saved), { mode: 0o600 });
    };
    for (const who of [owner, guest]) {
      corrupt(who);
      const refused = await who.run(['participants']);
      expect(refused.code).toBe(4);
      expect(refused.stderr).toContain('unknown key for this space ("Open still")');
      expect(refused.stderr).toContain(
        'The key saved here for "Open still" is not one the server knows: the credentials file was edited, or another server answers at this address',
      );
      expect(refused.stderr).toContain('`convene doctor` checks the server and the default space’s key');
      expect(refused.stderr).not.toContain('closes or expires');
      expect(refused.stderr).not.toContain('left or were removed');
      const json = await who.run(['participants', '--json']);
      expect(JSON.parse(json.stderr)).toMatchObject({ code: 'key_unknown', status: 401, exitCode: 4 });
      // doctor, which the hint points at, says the same of the default space's key.
      const doctor = await who.run(['doctor']);
      expect(doctor.code).toBe(1);
      expect(doctor.stdout).toContain('✗ default space: Open still: unknown key for this space');
      expect(doctor.stdout).toContain('is not one the server knows');
      expect(doctor.stdout).not.toContain('join again');
      // whoami says it so too, of the owner's key as of a participant's: nobody left or was removed.
      const whoami = await who.run(['whoami']);
      expect(whoami.code).toBe(0);
      expect(whoami.stdout).toContain(
        'its key is not one the server knows: the credentials file was edited, or another server answers at this address',
      );
      expect(whoami.stdout).not.toContain('left or were removed');
      expect((await who.run(['whoami', '--json'])).json().defaultSpace).toMatchObject({
        spaceId,
        state: 'keyRefused',
      });
    }
  });

  it('after leaving or closing the default space, makes the one space left the default, or says none is and how to pick one', async () => {
    const owner = user();
    const guest = user();
    const { spaceId: firstId } = (await owner.run(['space', 'create', 'First', '--json'])).json();
    await joinAs(owner, guest, 'Gil');
    const { spaceId: secondId } = (await owner.run(['space', 'create', 'Second', '--json'])).json();
    await joinAs(owner, guest, 'Gil');
    // The guest leaves the default space, Second: First is the one left, and becomes the default.
    const left = await guest.run(['leave', '--yes']);
    expect(left.code).toBe(0);
    expect(left.stderr).toContain('Left Second');
    expect(left.stderr).toContain('First, the one space left here, is your default space now');
    expect(guest.credentials().hosts[server.url].defaultSpace).toBe(firstId);
    expect((await guest.run(['send', 'still in First'])).code).toBe(0);
    // --json stays the answer it was.
    expect((await guest.run(['leave', '--yes', '--json'])).json()).toEqual({ ok: true });
    // Nothing left: said, with how to have a space again.
    const empty = user();
    await joinAs(owner, empty, 'Ned');
    const none = await empty.run(['leave', '--yes']);
    expect(none.stderr).toContain(
      'No space is saved here now: create one with `convene space create NAME` or join one with `convene join LINK`.',
    );

    // The owner closes the default space, Second: First is the only other one, the default now.
    const closed = await owner.run(['space', 'close', '--yes']);
    expect(closed.code).toBe(0);
    expect(closed.stderr).toContain('Closed Second');
    expect(closed.stderr).toContain('First, the one other space saved here, is your default space now');
    // The closed space is kept (listed as closed), and its hint names it: it is not the default.
    expect(closed.stderr).toContain('`convene leave "Second"` forgets it here');
    expect(owner.credentials().hosts[server.url].spaces[secondId]).toBeDefined();
    expect(owner.credentials().hosts[server.url].defaultSpace).toBe(firstId);
    expect((await owner.run(['send', 'First it is'])).code).toBe(0);
    // Several other open ones (Second is closed): none is the default, and how to pick one is said.
    (await owner.run(['space', 'create', 'Extra', '--json'])).json();
    (await owner.run(['space', 'create', 'Third', '--json'])).json();
    const several = await owner.run(['space', 'close', '--yes']);
    expect(several.code).toBe(0);
    expect(several.stderr).toContain(
      'No space is chosen now: pick the default with `convene space use NAME` (`convene space list` lists them).',
    );
    expect(owner.credentials().hosts[server.url].defaultSpace).toBeUndefined();
    // Closing a space that is not the default changes nothing of it.
    expect((await owner.run(['space', 'use', 'First'])).code).toBe(0);
    (await owner.run(['space', 'create', 'Fourth', '--json'])).json();
    expect((await owner.run(['space', 'use', 'First'])).code).toBe(0);
    const other = await owner.run(['space', 'close', 'Fourth']);
    expect(other.stderr).not.toContain('default space');
    expect(owner.credentials().hosts[server.url].defaultSpace).toBe(firstId);
  });

  it('never makes a closed space the default: the server is asked which of the others are open', async () => {
    const owner = user();
    const { spaceId: oldId } = (await owner.run(['space', 'create', 'Old', '--json'])).json();
    expect((await owner.run(['space', 'close', '--yes'])).code).toBe(0);
    const { spaceId: openId } = (await owner.run(['space', 'create', 'Open', '--json'])).json();
    const { spaceId: currentId } = (await owner.run(['space', 'create', 'Current', '--json'])).json();
    expect(owner.credentials().hosts[server.url].defaultSpace).toBe(currentId);
    // Two others, one of them closed: the open one is the default.
    const closed = await owner.run(['space', 'close', '--yes']);
    expect(closed.code).toBe(0);
    expect(closed.stderr).toContain('Open, the one other open space saved here, is your default space now');
    expect(owner.credentials().hosts[server.url].defaultSpace).toBe(openId);
    // Every other one closed: the default stays, and how to have an open space is said.
    const last = await owner.run(['space', 'close', '--yes']);
    expect(last.code).toBe(0);
    expect(last.stderr).toContain(
      'No open space is saved here now: create one with `convene space create NAME` or join one with `convene join LINK`.',
    );
    expect(owner.credentials().hosts[server.url].defaultSpace).toBe(openId);
    // Leaving (forgetting) the closed default with one closed space left and one open: the open one.
    const { spaceId: freshId } = (await owner.run(['space', 'create', 'Fresh', '--json'])).json();
    expect((await owner.run(['space', 'use', 'Open'])).code).toBe(0);
    const left = await owner.run(['leave', 'Open', '--yes']);
    expect(left.code).toBe(0);
    expect(left.stderr).toContain('Fresh, the one open space left here, is your default space now');
    expect(owner.credentials().hosts[server.url].defaultSpace).toBe(freshId);
    expect(Object.keys(owner.credentials().hosts[server.url].spaces).sort()).toEqual(
      [oldId, currentId, freshId].sort(),
    );
  });

  it('never makes a space whose key was refused the default: one you were removed from', async () => {
    const owner = user();
    (await owner.run(['space', 'create', 'Secret', '--json'])).json();
    const secretLink = (await owner.run(['invite', '--json'])).json().humanLink;
    (await owner.run(['space', 'create', 'Docs', '--json'])).json();
    const docsLink = (await owner.run(['invite', '--json'])).json().humanLink;
    const ada = user();
    expect((await ada.run(['join', secretLink, '--name', 'Ada'])).code).toBe(0);
    const { spaceId: docsId } = (await ada.run(['join', docsLink, '--name', 'Ada', '--json'])).json();
    expect(ada.credentials().hosts[server.url].defaultSpace).toBe(docsId);
    expect((await owner.run(['kick', 'Ada', '--space', 'Secret', '--yes'])).code).toBe(0);
    const left = await ada.run(['leave', 'Docs', '--yes']);
    expect(left.code).toBe(0);
    expect(left.stderr).not.toContain('is your default space now');
    expect(left.stderr).toContain(
      'No open space is saved here now: create one with `convene space create NAME`',
    );
    expect(ada.credentials().hosts[server.url].defaultSpace).toBeUndefined();
  });
});

describe('the participant picker of the moderation verbs', () => {
  it('says there is nobody to act on (exit 5) rather than asking for an argument; off a terminal, a usage error', async () => {
    const owner = user();
    expect((await owner.run(['space', 'create', 'Empty room'])).code).toBe(0);
    for (const [verb, hint] of [
      ['kick', 'whose status is active, muted or waitingForApproval can be removed'],
      ['approve', 'whose status is waitingForApproval can be approved'],
    ] as const) {
      const terminal = new Terminal([process.execPath, bundle, verb], owner.env, owner.home);
      try {
        await eventually(() => expect(terminal.screen()).toMatch(/EXIT=\d+/));
        const screen = terminal.screen();
        expect({ verb, exit: /EXIT=\d+/.exec(screen)?.[0] }).toEqual({ verb, exit: 'EXIT=5' });
        expect(screen).toContain(`nobody to ${verb} in Empty room`);
        expect(screen).toContain(hint);
        expect(screen).not.toContain('missing participant');
      } finally {
        terminal.close();
      }
    }
    const script = await owner.run(['kick']);
    expect(script.code).toBe(2);
    expect(script.stderr).toContain('missing participant to kick');
  });

  it('shows a status in the API’s word, as the tables and --json do (waitingForApproval)', async () => {
    const owner = user();
    expect((await owner.run(['space', 'create', 'Picky', '--private'])).code).toBe(0);
    const { humanLink } = (await owner.run(['invite', '--json'])).json();
    const fred = user();
    const joining = follow(fred, ['join', humanLink, '--name', 'Fred']);
    await waitingForApproval(owner, 'Fred');
    expect((await owner.run(['participants'])).stdout).toMatch(/Fred .*\bwaitingForApproval\b/);
    const terminal = new Terminal([process.execPath, bundle, 'kick'], owner.env, owner.home);
    try {
      await eventually(() => expect(terminal.screen()).toContain('Participant to kick'));
      expect(terminal.screen()).toContain('Fred (waitingForApproval)');
      terminal.press('Enter');
      // Picked, then confirmed: kicking someone waiting refuses their request.
      await eventually(() => expect(terminal.screen()).toContain('Refuse Fred’s request to join Picky?'));
      terminal.press('y');
      await eventually(() => expect(terminal.screen()).toContain('EXIT=0'));
      expect(terminal.screen()).toContain('Refused Fred’s request to join Picky');
    } finally {
      terminal.close();
    }
    expect((await joining.done).code).toBe(4);
  });
});

describe('kick and reject on a terminal', () => {
  const status = async (owner: User, name: string) =>
    (await owner.run(['participants', '--json'])).json().find((p: any) => p.name === name)?.status;

  it('ask before removing someone (default no); y removes; --yes and scripts do not ask', async () => {
    const owner = user();
    expect((await owner.run(['space', 'create', 'Careful'])).code).toBe(0);
    for (const name of ['Kit', 'Kim', 'Kay']) await joinAs(owner, user(), name);
    const question = 'Remove Kit from Careful? Their key stops working at once.';
    // Enter takes the default, No: nothing changes, exit 1.
    const declined = await answered(owner, ['kick', 'Kit'], question, 'Enter');
    expect(declined).toContain('EXIT=1');
    expect(declined).toContain('Nothing was changed.');
    expect(await status(owner, 'Kit')).toBe('active');
    const accepted = await answered(owner, ['kick', 'Kit'], question, 'y');
    expect(accepted).toContain('EXIT=0');
    expect(accepted).toContain('Removed Kit from Careful');
    expect(await status(owner, 'Kit')).toBe('kicked');
    // -y on a terminal, and no terminal at all: not asked.
    const yes = await answered(owner, ['kick', 'Kim', '-y'], undefined);
    expect(yes).toContain('EXIT=0');
    expect(yes).not.toContain('Remove Kim');
    expect((await owner.run(['kick', 'Kay'])).code).toBe(0);
    expect(await status(owner, 'Kay')).toBe('kicked');
  });

  it('ask before refusing a request to join (default no)', async () => {
    const owner = user();
    expect((await owner.run(['space', 'create', 'Door', '--private'])).code).toBe(0);
    const { humanLink } = (await owner.run(['invite', '--json'])).json();
    const joining = follow(user(), ['join', humanLink, '--name', 'Rae']);
    await waitingForApproval(owner, 'Rae');
    const question = 'Refuse Rae’s request to join Door?';
    expect(await answered(owner, ['reject', 'Rae'], question, 'n')).toContain('EXIT=1');
    expect(await status(owner, 'Rae')).toBe('waitingForApproval');
    expect(await answered(owner, ['reject', 'Rae'], question, 'y')).toContain('EXIT=0');
    expect((await joining.done).code).toBe(4);
  });

  it('document --yes in their help', async () => {
    for (const verb of ['kick', 'reject']) {
      const help = (await user().run([verb, '--help'])).stdout;
      expect(help).toContain('-y, --yes');
      expect(help.replace(/\s+/g, ' ')).toContain('On a terminal it asks first');
    }
  });
});

describe('join on a terminal', () => {
  it('offers the user name as the default name: Enter takes it, typing replaces it', async () => {
    const { userInfo } = await import('node:os');
    const owner = user();
    expect((await owner.run(['space', 'create', 'Named'])).code).toBe(0);
    const { humanLink } = (await owner.run(['invite', '--json'])).json();
    for (const [typed, name] of [
      ['Ada', 'Ada'],
      ['', userInfo().username],
    ] as const) {
      const guest = user();
      const terminal = new Terminal([process.execPath, bundle, 'join', humanLink], guest.env, guest.home);
      try {
        await eventually(() => expect(terminal.screen()).toContain('Your name in the space'));
        if (typed) terminal.press('-l', typed);
        terminal.press('Enter');
        await eventually(() => expect(terminal.screen()).toContain('EXIT=0'));
        expect(terminal.screen()).toContain(`Joined Named as ${name}`);
      } finally {
        terminal.close();
      }
    }
    const names = (await owner.run(['participants', '--json'])).json().map((p: any) => p.name);
    expect(names).toContain('Ada');
    expect(names).toContain(userInfo().username);
  });
});

describe('space use --key on a terminal', () => {
  it('asks for the key hidden; Ctrl-D on an empty answer ends the prompt as Ctrl-C does (exit 130)', async () => {
    const owner = user();
    const { spaceId, ownerPrivateKey } = (await owner.run(['space', 'create', 'Asked', '--json'])).json();
    /** `space use --key -` on a terminal, once it asks; `answer` types into it. */
    const asking = async (answer: (terminal: Terminal) => Promise<void>) => {
      const human = user();
      const terminal = new Terminal(
        [process.execPath, bundle, 'space', 'use', spaceId, '--key', '-'],
        human.env,
        human.home,
      );
      try {
        await eventually(() => expect(terminal.screen()).toContain('Paste the space key'));
        await answer(terminal);
      } finally {
        terminal.close();
      }
    };
    await asking(async (terminal) => {
      terminal.press('-l', ownerPrivateKey);
      terminal.press('Enter');
      await eventually(() => expect(terminal.screen()).toContain('EXIT=0'));
      expect(terminal.screen()).toContain('Saved your owner key for Asked');
      expect(terminal.screen()).not.toContain(ownerPrivateKey);
    });
    await asking(async (terminal) => {
      terminal.press('C-d');
      await eventually(() => expect(terminal.screen()).toContain('EXIT=130'));
      expect(terminal.screen()).toContain('cancelled');
      expect(terminal.cursorShown()).toBe(true);
    });
    // As a shell has it, Ctrl-D ends only an empty answer: a half-typed one is still asked for.
    await asking(async (terminal) => {
      terminal.press('-l', 'ab');
      terminal.press('C-d');
      await new Promise((done) => setTimeout(done, 500));
      expect(terminal.screen()).not.toContain('EXIT=');
      terminal.press('C-c');
      await eventually(() => expect(terminal.screen()).toContain('EXIT=130'));
    });
  });
});

describe('leave on a terminal', () => {
  it('tells the owner at once that the owner cannot leave, without asking first (exit 6)', async () => {
    const owner = user();
    expect((await owner.run(['space', 'create', 'Kept'])).code).toBe(0);
    const terminal = new Terminal([process.execPath, bundle, 'leave'], owner.env, owner.home);
    try {
      await eventually(() => expect(terminal.screen()).toMatch(/EXIT=\d+/));
      expect(terminal.screen()).toContain('EXIT=6');
      expect(terminal.screen()).toContain('the owner cannot leave');
      expect(terminal.screen()).not.toContain('Your key stops working');
    } finally {
      terminal.close();
    }
    expect((await owner.run(['space', 'show', 'Kept'])).code).toBe(0);
  });
});

describe('prompts without colour', () => {
  it('stay under NO_COLOR and --no-color, with no style but the cursor’s; coloured otherwise', async () => {
    /** The SGR sequences a prompt left on the screen, typed into and left with Ctrl-C. */
    const styles = async (env: Record<string, string>, flags: string[]) => {
      const someone = user(env);
      const terminal = new Terminal(
        [process.execPath, bundle, ...flags, 'space', 'create'],
        someone.env,
        someone.home,
      );
      try {
        await eventually(() => expect(terminal.screen()).toContain('Name of the space'));
        terminal.press('-l', 'abc');
        await eventually(() => expect(terminal.screen()).toContain('abc'));
        terminal.press('C-c');
        await eventually(() => expect(terminal.screen()).toContain('EXIT=130'));
        // biome-ignore lint/suspicious/noControlCharactersInRegex: the escapes are what is looked for.
        return [...terminal.screen({ escapes: true }).matchAll(/\x1b\[([0-9;]*)m/g)]
          .flatMap(([, codes]) => codes!.split(';'))
          .filter((code) => !['0', '7', '27', '8', '28', ''].includes(code));
      } finally {
        terminal.close();
      }
    };
    expect(await styles({}, [])).not.toEqual([]);
    expect(await styles({ NO_COLOR: '1' }, [])).toEqual([]);
    expect(await styles({}, ['--no-color'])).toEqual([]);
  });
});

describe('tables with wide characters', () => {
  it('keep their columns in line in participants (a CJK name, an emoji)', async () => {
    const owner = user();
    expect((await owner.run(['space', 'create', 'Wide', '--owner-name', '日本語の名前'])).code).toBe(0);
    await joinAs(owner, user(), '🎉');
    await joinAs(owner, user(), 'Ada');
    const lines = (await owner.run(['participants'])).stdout.trimEnd().split('\n');
    // Where the second column starts, in terminal columns: two for each wide character.
    const columns = (line: string) => {
      const second = line.search(/ {2}\S/) + 2;
      return [...line.slice(0, second)].reduce(
        (n, char) => n + (/[\u3000-\u9fff]|\p{Extended_Pictographic}/u.test(char) ? 2 : 1),
        0,
      );
    };
    expect(lines.length).toBe(4);
    expect(new Set(lines.map(columns)).size).toBe(1);
  });
});

describe('tables on a terminal', () => {
  it('are cut to its width, a cut value ending with …, ids whole; piped or --json, every value is whole', async () => {
    const owner = user();
    expect((await owner.run(['space', 'create', 'Wide'])).code).toBe(0);
    const long = `${'Quarterly release plan with every dependency '.repeat(5).slice(0, 187)}.md`;
    expect(long).toHaveLength(190);
    expect((await owner.run(['artifact', 'create', long])).code).toBe(0);
    const { id } = (await owner.run(['artifact', 'list', '--json'])).json()[0];
    // The tmux terminal is 160 columns wide; capture-pane -J joins a wrapped line back into one.
    const screen = await answered(owner, ['artifact', 'list'], undefined);
    const rows = screen.split('\n').filter((line) => line.includes(id) || line.startsWith('NAME'));
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row.trimEnd().length).toBeLessThanOrEqual(160);
    expect(rows[1]).toMatch(/^Quarterly release plan with every .*… {2}/);
    expect(rows[1]).toContain(`  ${id}  1`);
    expect(screen).not.toContain(long);
    // Piped, and with --json: whole.
    expect((await owner.run(['artifact', 'list'])).stdout).toContain(`${long}  ${id}`);
    expect((await owner.run(['artifact', 'list', '--json'])).json()[0].name).toBe(long);
  });

  it('fit a narrow one (50 columns): ids shortened to the start commands take, piped whole', async () => {
    const owner = user();
    expect((await owner.run(['space', 'create', 'Narrow', '--owner-name', 'Grace Hopper'])).code).toBe(0);
    await joinAs(owner, user(), 'Ada Lovelace, reviewer of the release plan');
    const people = (await owner.run(['participants', '--json'])).json();
    const ada = people.find((p: any) => p.name.startsWith('Ada')).participantId;
    const terminal = new Terminal([process.execPath, bundle, 'participants'], owner.env, owner.home, {
      width: 50,
      height: 20,
    });
    let screen: string;
    try {
      await eventually(() => expect(terminal.screen()).toMatch(/EXIT=\d+/));
      screen = terminal.screen();
    } finally {
      terminal.close();
    }
    // capture-pane -J joins a wrapped line back into one: none is wider than the terminal.
    const rows = screen.split('\n').filter((line) => /^(NAME|Gra|Ada)/.test(line));
    expect(rows, screen).toHaveLength(3);
    for (const row of rows) expect(row.trimEnd().length, row).toBeLessThanOrEqual(50);
    expect(rows[2]).toMatch(new RegExp(`^Ada Lov[^ ]*…  ${ada.slice(0, 8)}  active`));
    expect(screen).not.toContain(ada);
    // The start shown names the participant, as a whole id would.
    expect((await owner.run(['mute', ada.slice(0, 8)])).code).toBe(0);
    // Piped: every value whole.
    expect((await owner.run(['participants'])).stdout).toContain(
      `Ada Lovelace, reviewer of the release plan  ${ada}`,
    );
  });
});
