// The README's examples run verbatim (test/unit/package.test.ts runs the quick start from the
// packed package), each as a program with tsx, where `@convene/sdk` is the workspace's sources.
// A block that is a whole program runs alone; a fragment runs after a prelude that gives it what
// its section assumes (`me`, `owner`, a `signal` that SIGTERM aborts…) and before an epilogue that
// prints what it did, while the test plays the others in the space (joiners, the owner, a human)
// and checks what the program printed and what it did to the space.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type JoinedSpaceClient, NotFoundError, PendingJoin } from '../src';
import { hub, ownedSpace, participant, serverUrl } from './helpers';
import { block, runExample } from './helpers/readme';
import { startServer } from './helpers/server';

/** A program: its parts (the prelude, a README block, lines of the epilogue) one after another. */
const program = (...parts: string[]) =>
  parts.map((part) => (part.endsWith('\n') ? part : `${part}\n`)).join('');

/** A prelude: `hub`, a client of the server, then `lines`. */
const prelude = (...lines: string[]) =>
  program(
    'import { Convene } from "@convene/sdk";',
    'const hub = new Convene({ baseUrl: process.env.CONVENE_URL! });',
    ...lines,
  );

/** A space client named `name` (`me`, `owner`), of the key the environment gives (see `as`). */
const keyed = (name = 'me') =>
  `const ${name} = hub.space(process.env.SPACE_ID!, process.env.KEY!, process.env.PARTICIPANT_ID!);`;

/** An AbortSignal that the test's SIGTERM aborts. */
const signal = [
  'const controller = new AbortController();',
  'process.once("SIGTERM", () => controller.abort());',
  'const signal = controller.signal;',
];

/** The environment of a program on `client`'s key in its space (see `keyed`). */
const as = (client: JoinedSpaceClient, url = serverUrl()) => ({
  CONVENE_URL: url,
  SPACE_ID: client.spaceId,
  KEY: client.key,
  PARTICIPANT_ID: client.participantId,
});

const lines = (text: string, prefix: string) => text.split('\n').filter((line) => line.startsWith(prefix));

describe('the README', () => {
  it('runs "Several loops in one agent" as written, and it prints what it says', async () => {
    const { stdout } = await runExample('agents', block('Several loops in one agent', 'js'), {
      CONVENE_URL: serverUrl(),
    }).exit;
    expect(stdout).toBe(block('Several loops in one agent', 'text'));
  });

  it('"Approve joiners (owner)" admits the trusted joiners, those waiting from before and those arriving, and refuses the others', async () => {
    const { owner } = await ownedSpace(hub(), { privacy: 'private' });
    const { agentLink } = await owner.invitations.create();
    // Waiting before the owner watches: the stream's context event shows this one.
    const early = await hub().join(agentLink, { name: 'Trusted early', wait: false });
    if (!(early instanceof PendingJoin)) throw new Error('a private space admitted a joiner at once');
    const example = runExample(
      'approve',
      program(
        prelude(keyed('owner'), ...signal),
        block('Approve joiners (owner)', 'ts'),
        'console.log("stopped watching");',
      ),
      as(owner),
    );
    const admittedEarly = await example.meanwhile(early.wait({ pollIntervalMs: 100 }));
    // Arriving while the owner watches: their participant-status events.
    const [trusted, stranger] = await example.meanwhile(
      Promise.allSettled([
        hub().join(agentLink, { name: 'Trusted Bot', pollIntervalMs: 100 }),
        hub().join(agentLink, { name: 'Stranger', pollIntervalMs: 100 }),
      ]),
    );
    expect(trusted.status).toBe('fulfilled');
    expect(stranger.status).toBe('rejected');
    const refusal = (stranger as PromiseRejectedResult).reason;
    expect(refusal).toBeInstanceOf(NotFoundError);
    expect(refusal.code).toBe('join_refused');

    // Each joiner was decided once (a second approve would have failed the loop), and the
    // signal ends the loop without an error.
    example.kill('SIGTERM');
    expect((await example.exit).stdout).toBe('stopped watching\n');
    const { participants } = await owner.get();
    expect(participants.map((p) => [p.name, p.status]).sort()).toEqual(
      [
        [participants.find((p) => p.isOwner)?.name, 'active'],
        ['Stranger', 'kicked'],
        ['Trusted Bot', 'active'],
        ['Trusted early', 'active'],
      ].sort(),
    );
    expect(await admittedEarly.messages.send('in')).toMatchObject({ messageId: expect.any(String) });
  });

  it('"Join a private space": wait: false gives a PendingJoin to save in a private space, the client in a public one', async () => {
    const run = (link: string) =>
      runExample(
        'pending',
        program(prelude('const link = process.env.LINK!;'), block('Join a private space', 'ts')),
        { CONVENE_URL: serverUrl(), LINK: link },
      ).exit;
    const { owner } = await ownedSpace(hub(), { privacy: 'private' });
    const { agentLink } = await owner.invitations.create();
    const waiting = (await run(agentLink)).stdout.match(/^waiting for approval; resume with (\{.*\})\n$/);
    expect(waiting).not.toBeNull();
    const saved = JSON.parse(waiting![1]!);
    expect(Object.keys(saved).sort()).toEqual(['invitationKey', 'participantId', 'pollToken', 'spaceId']);
    await owner.participants.approve(saved.participantId);
    const me = await hub().pendingJoin(saved).wait({ pollIntervalMs: 100 });
    expect(me.participantId).toBe(saved.participantId);

    const { owner: open } = await ownedSpace(hub(), { privacy: 'public' });
    const { agentLink: openLink } = await open.invitations.create();
    const admitted = (await run(openLink)).stdout.match(/^admitted at once as (\S+)\n$/);
    const { participants } = await open.get();
    expect(participants.find((p) => p.participantId === admitted?.[1])?.name).toBe('Reviewer');
  });

  it('"Responses": withResponse() gives the data and the Response with the headers named', async () => {
    const { owner } = await ownedSpace();
    const me = await participant(owner, 'Me');
    const { stdout } = await runExample(
      'responses',
      program(
        prelude(keyed()),
        block('Responses', 'ts'),
        'console.log("sent", data.messageId === (await me.messages.list()).messages[0]?.id);',
        'for (const name of ["RateLimit-Remaining", "Idempotency-Replayed", "Request-Id"])',
        '  console.log(name, response.headers.get(name));',
      ),
      as(me),
    ).exit;
    expect(stdout).toMatch(
      /^sent true\nRateLimit-Remaining \d+\nIdempotency-Replayed null\nRequest-Id \S+\n$/,
    );
  });

  it('"Streams": polling yields every message, and its cursor is where the next poll starts', async () => {
    const { owner } = await ownedSpace();
    const me = await participant(owner, 'Me');
    await owner.messages.send('one');
    await owner.messages.send('two');
    const { stdout } = await runExample(
      'polling',
      program(
        prelude(
          keyed(),
          'const handle = async (message: { content: string }) => console.log(message.content);',
        ),
        block('Streams', 'ts', 2),
        'await me.messages.send("three");',
        'console.log("next:", (await me.messages.list({ since: cursor })).messages.map((m) => m.content).join());',
      ),
      as(me),
    ).exit;
    expect(stdout).toBe('one\ntwo\nnext: three\n');
  });

  it('"Artifacts and withLock": the callback writes the next version, and the lock is released', async () => {
    const { owner } = await ownedSpace();
    const me = await participant(owner, 'Me');
    const plan = await owner.artifacts.create({ name: 'plan', content: '# Plan\n' });
    const { stdout } = await runExample(
      'withlock',
      program(
        prelude(
          keyed(),
          'const id = process.env.ARTIFACT_ID!;',
          'const think = async (content: string) => content + "- thought through\\n";',
        ),
        block('Artifacts and `withLock`', 'ts', 0),
        'console.log("version", updated.version);',
        'console.log(await me.artifacts.download(id));',
      ),
      { ...as(me), ARTIFACT_ID: plan.id },
    ).exit;
    expect(stdout).toBe('version 2\n# Plan\n- thought through\n\n');
    expect(await owner.artifacts.lock(plan.id)).toMatchObject({ lockedBy: owner.participantId });
  });

  it('"Waiting for the lock": the program waits while another participant holds the lock, then writes after them', async () => {
    const { owner } = await ownedSpace();
    const me = await participant(owner, 'Me');
    const holder = await participant(owner, 'Holder');
    const plan = await owner.artifacts.create({ name: 'plan', content: '# Plan\n' });
    let holding!: () => void;
    const held = new Promise<void>((resolve) => {
      holding = resolve;
    });
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const holders = holder.artifacts.withLock(plan.id, async (doc) => {
      holding();
      await released;
      return doc.write(`${doc.content}- the holder's line\n`);
    });
    await held;
    const example = runExample(
      'waitlock',
      program(
        'import { Convene } from "@convene/sdk";',
        // At info, the client says when it starts waiting: the holder lets go then.
        'const hub = new Convene({ baseUrl: process.env.CONVENE_URL!, logLevel: "info" });',
        keyed(),
        'const id = process.env.ARTIFACT_ID!;',
        'const think = async (content: string) => content + "- thought through\\n";',
        block('Waiting for the lock', 'ts', 0),
        'console.log(await me.artifacts.download(id));',
      ),
      { ...as(me), ARTIFACT_ID: plan.id },
    );
    await example.printed('waiting up to');
    release();
    await holders;
    const { stdout } = await example.exit;
    expect(stdout).toMatch(
      /^\[convene\] artifact [0-9a-f-]{36} is locked \(423 artifact is locked by another participant \("Holder"\) until [^)]+\); waiting up to \d+ ms for it\n/,
    );
    expect(stdout.endsWith("# Plan\n- the holder's line\n- thought through\n\n")).toBe(true);
  });

  it('"Errors": say() sends, stays quiet while muted, joins again after leaving, gives up once kicked', async () => {
    const { owner, spaceId } = await ownedSpace();
    const { agentLink } = await owner.invitations.create();
    const { stdout } = await runExample(
      'errors',
      program(
        prelude(
          'const agentLink = process.env.AGENT_LINK!;',
          'const giveUp = (spaceId: string) => console.log("gave up on", spaceId);',
        ),
        block('Errors', 'ts', 0),
        'const owner = hub.space(me.spaceId, process.env.OWNER_KEY!);',
        'console.log("said:", await say("hello"));',
        'await owner.participants.mute(me.participantId);',
        'console.log("muted, said:", await say("hello?"));',
        'await owner.participants.unmute(me.participantId);',
        'const first = me.participantId;',
        'await hub.space(me.spaceId, me.key).leave(); // another process of ours',
        'console.log("left, said:", await say("back"), "as another participant:", me.participantId !== first);',
        'await owner.participants.kick(me.participantId);',
        'console.log("kicked, said:", await say("anyone?"));',
      ),
      { CONVENE_URL: serverUrl(), AGENT_LINK: agentLink, OWNER_KEY: owner.key },
    ).exit;
    expect(stdout).toBe(
      [
        'said: true',
        'muted, said: false',
        'left, said: true as another participant: true',
        `gave up on ${spaceId}`,
        'kicked, said: false',
        '',
      ].join('\n'),
    );
    expect((await owner.messages.list()).messages.map((m) => m.content)).toEqual(['hello', 'back']);
  });

  it('"Errors": a LockedError names the holder of the lock and until when', async () => {
    const { owner } = await ownedSpace();
    const me = await participant(owner, 'Me');
    const holder = await participant(owner, 'Holder');
    const artifact = await holder.artifacts.create({ name: 'plan', content: '# Plan\n' });
    const lock = await holder.artifacts.lock(artifact.id);
    // Locks live 3 s on the shared server, less than a loaded machine takes to start the
    // program: the holder keeps it while the program runs, and it is told one of its expiries.
    const expiries = [lock.lockExpiresAt];
    let holding = true;
    const held = (async () => {
      while (holding) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        if (holding) expiries.push((await holder.artifacts.heartbeat(artifact.id)).lockExpiresAt);
      }
    })();
    const run = runExample(
      'locked',
      program(prelude(keyed(), 'const id = process.env.ARTIFACT_ID!;'), block('Errors', 'ts', 2)),
      { ...as(me), ARTIFACT_ID: artifact.id },
    );
    const { stdout } = await run.exit.finally(() => {
      holding = false;
    });
    await held;
    const printed = stdout.match(/^held by Holder until (\S+)\n$/);
    expect(printed, stdout).not.toBeNull();
    expect(expiries).toContain(printed![1]);
  });

  it('"Streams": the loop prints each kind of event, and ends after space-closed', async () => {
    const { owner } = await ownedSpace();
    const me = await participant(owner, 'Reader');
    const owners = (await owner.get()).participants.find((p) => p.isOwner)?.name;
    await owner.messages.send('hello');
    const example = runExample(
      'streams',
      program(prelude(keyed()), block('Streams', 'ts', 0), 'console.log("the loop is over");'),
      as(me),
    );
    await example.printed('hello\n'); // the backlog: the stream is open
    await participant(owner, 'Scout');
    const plan = await owner.artifacts.create({ name: 'plan', content: '# Plan\n' });
    await owner.artifacts.withLock(plan.id, (doc) => doc.write('# Plan\n- ship it\n'));
    await example.printed('plan is now version 2\n');
    await owner.close();
    expect((await example.exit).stdout).toBe(
      [
        `${owners} hello`,
        'Scout active',
        'plan is now version 2',
        'closed: closed',
        'the loop is over',
        '',
      ].join('\n'),
    );
  });

  it('"What concerns you": the inbox loop handles each mention once, acknowledges before its break, then reads by hand', async () => {
    const { owner, ownerId } = await ownedSpace();
    const me = await participant(owner, 'Writer');
    const example = runExample(
      'inbox',
      program(
        prelude(
          keyed(),
          'const reviewerId = process.env.REVIEWER_ID!;',
          'const handle = async (message: { content: string }) => console.log("handling:", message.content);',
        ),
        block('What concerns you: mentions, the inbox, long polls, webhooks', 'ts', 0),
        'console.log("by hand:", messages.map((m) => m.content).join());',
        'console.log("unread now:", (await me.inbox.get()).unread.inbox);',
      ),
      { ...as(me), REVIEWER_ID: ownerId },
    );
    const mention = (content: string) => owner.messages.send({ content, mentions: [me.participantId] });
    await mention('first');
    await mention('that is all');
    await example.printed('handling: that is all\n');
    await mention('one more');
    expect((await example.exit).stdout).toBe(
      ['handling: first', 'handling: that is all', 'by hand: one more', 'unread now: 0', ''].join('\n'),
    );
    // The owner, its reviewer, was asked.
    expect((await owner.inbox.get()).messages.map((m) => m.content)).toEqual(['Can you review?']);
  });

  it('"Linking an agent to a human": the agent waits for its human, then creates spaces on their dashboard', async () => {
    const example = runExample(
      'link',
      program(
        prelude(),
        block('Linking an agent to a human', 'ts'),
        'const space = await linked.spaces.create({ name: "Linked", description: "on the dashboard" });',
        'console.log("created", space.spaceId);',
      ),
      { CONVENE_URL: serverUrl() },
    );
    await example.printed('\n');
    const shown = /^Approve me at (\S+)\n$/.exec(example.stdout())?.[1];
    expect(shown).toBeDefined();
    const userCode = new URL(shown as string).searchParams.get('code') as string;
    const human = await hub().auth.signup({
      email: `readme-${randomUUID()}@example.com`,
      password: 'correct horse',
      name: 'Ada',
    });
    expect(await human.link.get(userCode)).toMatchObject({ agentName: 'release planner', status: 'pending' });
    await human.link.approve(userCode);
    const { stdout } = await example.exit;
    const spaceId = /created (\S+)\n$/.exec(stdout)?.[1];
    expect((await human.spaces()).spaces.map((s) => [s.spaceId, s.role])).toEqual([[spaceId, 'owner']]);
  });

  it('"Recover from a restart" and the stream\'s hooks: the loops ride out a restart of the server, nothing lost or repeated', async () => {
    const server = await startServer();
    try {
      const { owner } = await ownedSpace(hub({ baseUrl: server.url }));
      const me = await participant(owner, 'Agent', hub({ baseUrl: server.url }));
      const env = as(me, server.url);
      const recovering = runExample(
        'recover',
        program(
          prelude(
            keyed(),
            ...signal,
            'const observe = (event: import("@convene/sdk").StreamEvent) => {',
            '  if (event.event === "message") console.log("seen:", event.data.content);',
            '};',
            'const handle = async (message: { content: string }) => console.log("handled:", message.content);',
          ),
          block('Recover from a restart', 'ts'),
          'const [watched, worked] = await Promise.all([watch(), work()]);',
          'console.log("watch ended:", watched?.reason, "work ended:", worked?.reason);',
        ),
        env,
        { timeoutMs: 110_000 },
      );
      const hooked = runExample(
        'hooks',
        program(
          prelude(keyed()),
          block('Streams', 'ts', 1),
          'for await (const event of stream) if (event.event === "message") console.log("seen:", event.data.content);',
        ),
        env,
        { timeoutMs: 110_000 },
      );
      /** The owner mentions `me`: both streams see it, the inbox loop handles it. */
      const mentioned = async (content: string) => {
        await owner.messages.send({ content, mentions: [me.participantId] });
        await Promise.all([
          recovering.printed(`seen: ${content}\n`),
          recovering.printed(`handled: ${content}\n`),
          hooked.printed(`seen: ${content}\n`),
        ]);
      };
      await mentioned('before');
      await server.restart();
      await mentioned('after');
      await owner.close();

      const recovered = await recovering.exit;
      expect(lines(recovered.stdout, 'seen: ')).toEqual(['seen: before', 'seen: after']);
      expect(lines(recovered.stdout, 'handled: ')).toEqual(['handled: before', 'handled: after']);
      expect(recovered.stdout).toMatch(/\nwatch ended: closed work ended: closed\n$/);
      const hooks = await hooked.exit;
      expect(hooks.stdout).toBe('seen: before\nseen: after\n');
      expect(lines(hooks.stderr, 'connection lost')).toEqual([
        expect.stringMatching(/^connection lost \(.+\), reconnecting…$/),
      ]);
      expect(lines(hooks.stderr, 'reconnected')).toEqual(['reconnected']);
    } finally {
      await server.close();
    }
  }, 120_000);
});
