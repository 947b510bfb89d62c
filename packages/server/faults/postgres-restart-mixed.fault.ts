import { describe, expect, it } from 'vitest';
import { useDeployment } from './support/deployment';
import { countBy, report } from './support/figures';
import { type Answer, call, SseReader, sleep } from './support/http';
import { restartPostgres } from './support/postgres';

/** How long PostgreSQL stays down. */
const DOWN_SECONDS = 3;

/**
 * PostgreSQL restarted under every kind of write at once, on two nodes: sends, document locks,
 * writes and unlocks, the owner muting and unmuting, streams open on both nodes. Both nodes are
 * still up afterwards, without a restart: postgres.js wrote, from a timer, to a connection the
 * restart had closed, and the uncaught TypeError ended the process (patches/postgres@3.4.9.patch;
 * a trial saw 12 of 14 restarts end a node). And nothing was answered 500.
 */
describe('PostgreSQL restarting under mixed writes', () => {
  const deployment = useDeployment();

  it('leaves both nodes up, answering, and never 500', async () => {
    const nodes = [await deployment.start(), await deployment.start()];
    const urls = nodes.map((node) => node.url);
    const answers: { op: string; answer: Answer }[] = [];
    const record = (op: string, answer: Answer) => {
      answers.push({ op, answer });
      return answer;
    };
    const at = (n: number) => urls[n % urls.length]!;
    let running = true;
    const tasks: Promise<void>[] = [];
    const streams: SseReader[] = [];
    for (let s = 0; s < 2; s++) {
      const created = await call('POST', `${at(0)}/hub/space`, {
        body: { name: `Mixed ${s}`, description: 'every kind of write at once' },
      });
      expect(created.status).toBe(200);
      const { spaceId, ownerPrivateKey: owner } = created.body;
      const space = (n: number) => `${at(n)}/hub/space/${spaceId}`;
      const invitation = (await call('POST', `${space(0)}/invite`, { key: owner })).body.publicInvitationKey;
      const people: { participantId: string; participantPrivateKey: string }[] = [];
      for (let i = 0; i < 6; i++) {
        const joined = await call('POST', `${space(i)}/join`, {
          key: invitation,
          body: { name: `p${i}`, role: 'tester', isHuman: false },
        });
        expect(joined.status).toBe(200);
        people.push(joined.body);
      }
      const documents: string[] = [];
      for (let i = 0; i < 2; i++) {
        const made = await call('POST', `${space(0)}/artifact`, {
          key: owner,
          body: { name: `d${i}.md`, type: 'markdown', content: 'x' },
        });
        expect(made.status).toBe(200);
        documents.push(made.body.id);
      }
      for (const n of [0, 1]) streams.push(await SseReader.open(at(n), spaceId, { key: owner }));
      // Three senders.
      for (let i = 0; i < 3; i++)
        tasks.push(
          (async () => {
            for (let n = 0; running; n++)
              record(
                'send',
                await call('POST', `${space(n)}/messages`, {
                  key: people[i]!.participantPrivateKey,
                  body: { content: `m${n}` },
                }),
              );
          })(),
        );
      // The owner mutes and unmutes the senders.
      tasks.push(
        (async () => {
          for (let n = 0; running; n++) {
            const target = `participants/${people[n % 3]!.participantId}`;
            record('mute', await call('POST', `${space(n)}/${target}/mute`, { key: owner }));
            record('unmute', await call('POST', `${space(n + 1)}/${target}/unmute`, { key: owner }));
          }
        })(),
      );
      // Three lockers: lock, write, unlock.
      for (let i = 3; i < 6; i++)
        tasks.push(
          (async () => {
            const key = people[i]!.participantPrivateKey;
            for (let n = 0; running; n++) {
              const doc = `artifact/${documents[n % documents.length]}`;
              const lock = record('lock', await call('POST', `${space(n)}/${doc}/lock`, { key }));
              if (lock.status !== 200) {
                await sleep(20);
                continue;
              }
              record(
                'write',
                await call('PATCH', `${space(n + 1)}/${doc}`, { key, body: { content: `w${n}` } }),
              );
              record('unlock', await call('DELETE', `${space(n)}/${doc}/lock`, { key }));
            }
          })(),
        );
    }

    await sleep(3_000);
    await restartPostgres(DOWN_SECONDS);
    const restartedAt = answers.length;
    // Every kind of write answered 200 again after the restart, on both nodes.
    await sleep(8_000);
    running = false;
    await Promise.all(tasks);
    for (const stream of streams) stream.close();

    const byStatus = countBy(answers.map(({ op, answer }) => `${op} ${answer.status}`));
    const alive = nodes.map((node) => {
      try {
        process.kill(node.pid, 0);
        return true;
      } catch {
        return false;
      }
    });
    report('PostgreSQL restart under mixed writes', { answers: answers.length, byStatus, alive });

    expect(alive).toEqual([true, true]);
    for (const node of nodes) expect(node.output()).not.toMatch(/TypeError|uncaught/i);
    expect(
      answers.filter(({ answer }) => answer.status === 500).map(({ op, answer }) => [op, answer.body]),
    ).toEqual([]);
    const after = answers.slice(restartedAt);
    for (const op of ['send', 'mute', 'unmute', 'lock', 'write', 'unlock'])
      expect(
        after.some((a) => a.op === op && a.answer.status === 200),
        op,
      ).toBe(true);
  }, 240_000);
});
