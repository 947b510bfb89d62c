import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { byName, editing, eventually, heldEditor, joinAs, User, watch } from './helpers/cli';
import { startServer, type TestServer } from './helpers/server';

// A short lock lifetime, so that an editor can stay open longer than it. A server of its own:
// the other artifact tests would lose their locks to a slow machine.
const LOCK_TTL_S = 8;
let server: TestServer;
let owner: User;
let guest: User;

beforeAll(async () => {
  server = await startServer({ LOCK_TTL_S: String(LOCK_TTL_S) });
  owner = new User(server.url);
  guest = new User(server.url);
  await owner.run(['space', 'create', 'Heartbeat']);
  await joinAs(owner, guest, 'Gus');
  expect((await guest.run(['artifact', 'create', 'edit.md'])).code).toBe(0);
});
afterAll(async () => {
  await server?.close();
  owner?.remove();
  guest?.remove();
});

describe('artifact edit', () => {
  it('keeps the lock alive while the editor stays open longer than the lock lifetime', async () => {
    const held = heldEditor(guest, 'slow', { text: 'after a long think', write: 'last' });
    const { done } = await editing(guest, 'edit.md', held.ed, held.opened);
    const opened = Date.now();
    // Outlive the lock's lifetime, then check nobody else can take it.
    await eventually(() => expect(Date.now() - opened).toBeGreaterThan((LOCK_TTL_S + 2) * 1000), 30_000);
    const other = await owner.run(['artifact', 'lock', 'edit.md']);
    expect(other.code).toBe(6);
    expect(other.stderr).toContain('locked by Gus');
    held.release();
    const result = await done;
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('Saved edit.md as version 2');
    expect((await byName(owner, 'edit.md')).lockedBy).toBeUndefined();
  });

  it('leaves alone a lock someone took after the owner’s lapsed (the server was down), when its save fails', async () => {
    const held = heldEditor(owner, 'lapse', { text: "the owner's text", write: 'last' });
    const { done } = await editing(owner, 'edit.md', held.ed, held.opened);
    // No heartbeat reaches a stopped server: the owner's lock lapses, and Gus takes it.
    await server.stop();
    const stopped = Date.now();
    await eventually(() => expect(Date.now() - stopped).toBeGreaterThan((LOCK_TTL_S + 1) * 1000), 30_000);
    await server.start();
    await eventually(async () => expect((await guest.run(['artifact', 'lock', 'edit.md'])).code).toBe(0));
    held.release();
    const result = await done;
    expect(result.code).toBe(6);
    expect(result.stderr).toContain('is locked by Gus');
    // Releasing "its" lock would have forced Gus's (an owner's unlock does): it is still his.
    const gus = (await guest.run(['space', 'show', '--json'])).json();
    const doc = await byName(owner, 'edit.md');
    expect(doc.lockedBy).toBe(gus.participants.find((p: any) => p.name === 'Gus').participantId);
  });

  it('holds the warnings of a heartbeat failing while the editor is open until it exits, then says each once', async () => {
    expect((await owner.run(['artifact', 'create', 'dark.md'])).code).toBe(0);
    const held = heldEditor(owner, 'dark', { text: 'written in the dark', write: 'last' });
    const edit = watch(owner.spawn(['artifact', 'edit', 'dark.md'], { env: { EDITOR: held.ed } }), {
      timeoutMs: 90_000,
    });
    await eventually(() => expect(existsSync(held.opened)).toBe(true));
    await server.stop();
    try {
      // Long enough for two heartbeats to fail (the first within a third of the 8 s lock, the
      // next 5 s after it, each after the SDK's retries).
      const stopped = Date.now();
      await eventually(() => expect(Date.now() - stopped).toBeGreaterThan(15_000), 30_000);
      // Nothing drawn over the editor's screen meanwhile.
      expect(edit.stderr()).not.toContain('could not keep the lock');
      held.release();
      const result = await edit.done;
      // Said once the editor exited, once for failures alike, before what the save came to.
      const warnings = result.stderr.match(/could not keep the lock: [^\n]*/g) ?? [];
      expect(warnings, result.stderr).toHaveLength(1);
      expect(warnings[0]).toMatch(/; saving may fail \(it was held until \d\d:\d\d:\d\d\)$/);
      expect(result.stderr.indexOf('could not keep the lock')).toBeLessThan(
        result.stderr.indexOf('could not save dark.md'),
      );
      expect(result.stderr).toContain('Your text is kept in');
    } finally {
      await server.ensureStarted();
    }
  });

  it('says the lock is gone, not to lock it first, when the owner unlocks the document under the editor', async () => {
    expect((await owner.run(['artifact', 'create', 'taken.md'])).code).toBe(0);
    const held = heldEditor(guest, 'taken', { text: "Gus's text", write: 'last' });
    const { done } = await editing(guest, 'taken.md', held.ed, held.opened);
    expect((await owner.run(['artifact', 'unlock', 'taken.md', '--yes'])).code).toBe(0);
    // The next heartbeat, within a third of the 8 s lock, finds it gone.
    const unlocked = Date.now();
    await eventually(() => expect(Date.now() - unlocked).toBeGreaterThan(4_000), 10_000);
    held.release();
    const result = await done;
    const warnings = result.stderr.match(/your lock is gone[^\n]*/g) ?? [];
    expect(warnings, result.stderr).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /^your lock is gone \(the owner released it, or it lapsed; it was held until \d\d:\d\d:\d\d\): saving may fail$/,
    );
    expect(result.stderr).not.toContain('lock it first');
  });

  it('says the key no longer works (exit 4) when the editor was removed meanwhile, keeps the text, and releases nothing', async () => {
    const kim = new User(server.url);
    try {
      await joinAs(owner, kim, 'Kim');
      expect((await owner.run(['artifact', 'create', 'kim.md'])).code).toBe(0);
      const held = heldEditor(kim, 'removed', { text: "Kim's text", write: 'last' });
      const { done } = await editing(kim, 'kim.md', held.ed, held.opened);
      expect((await owner.run(['kick', 'Kim'])).code).toBe(0);
      held.release();
      const result = await done;
      expect(result.code).toBe(4);
      expect(result.stderr).toMatch(
        /could not save kim\.md: this key no longer works: its participant was removed from this space/,
      );
      expect(result.stderr).toContain('Your text is kept in');
      expect(result.stderr).toContain('The owner removed you.');
      // Nothing that cannot work: a save or an unlock with a key the server no longer takes.
      expect(result.stderr).not.toContain('Save it later');
      expect(result.stderr).not.toContain('could not release the lock');
    } finally {
      kim.remove();
    }
  });
});
