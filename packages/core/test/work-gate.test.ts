import { describe, expect, it } from 'vitest';
import { RateLimitedError } from '../src/errors';
import { WorkGate } from '../src/infra/work-gate';

/** Work a test finishes by hand, recording when it started. */
function jobs() {
  const started: string[] = [];
  const finish = new Map<string, () => void>();
  const job = (name: string) => () =>
    new Promise<string>((resolve) => {
      started.push(name);
      finish.set(name, () => resolve(name));
    });
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  return { started, job, done: (name: string) => finish.get(name)!(), settle };
}

describe('WorkGate', () => {
  it('runs two at once, the rest first come first served, and refuses a fifth of one client', async () => {
    const gate = new WorkGate(2, 4, 'one at a time, Mallory');
    const { started, job, done, settle } = jobs();
    const mallory = ['m1', 'm2', 'm3', 'm4'].map((name) => gate.run('mallory', job(name)));
    // Mallory's fifth, while four of hers run or wait: refused at once, in a second.
    const fifth = gate.run('mallory', job('m5'));
    await expect(fifth).rejects.toBeInstanceOf(RateLimitedError);
    await expect(fifth).rejects.toMatchObject({ retryAfterSeconds: 1, message: 'one at a time, Mallory' });
    const alice = gate.run('alice', job('a1'));
    await settle();
    expect(started).toEqual(['m1', 'm2']);
    // Alice waits behind the two of Mallory's already waiting, not behind all she could send.
    done('m1');
    await settle();
    expect(started).toEqual(['m1', 'm2', 'm3']);
    done('m2');
    await settle();
    expect(started).toEqual(['m1', 'm2', 'm3', 'm4']);
    done('m3');
    await settle();
    expect(started).toEqual(['m1', 'm2', 'm3', 'm4', 'a1']);
    done('m4');
    done('a1');
    expect(await Promise.all([...mallory, alice])).toEqual(['m1', 'm2', 'm3', 'm4', 'a1']);
    // Hers done, Mallory may send again.
    const again = gate.run('mallory', job('m6'));
    await settle();
    done('m6');
    expect(await again).toBe('m6');
  });

  it('gives the slot back when work fails, and never refuses work of no client', async () => {
    const gate = new WorkGate(1, 1, 'later');
    await expect(gate.run('bob', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await gate.run('bob', async () => 'ran')).toBe('ran');
    const { started, job, done, settle } = jobs();
    const anonymous = ['x1', 'x2', 'x3'].map((name) => gate.run(undefined, job(name)));
    await settle();
    expect(started).toEqual(['x1']);
    for (const name of ['x1', 'x2', 'x3']) {
      done(name);
      await settle();
    }
    expect(await Promise.all(anonymous)).toEqual(['x1', 'x2', 'x3']);
  });
});
