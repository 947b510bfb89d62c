import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Convene } from '@convene/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  byName,
  editing,
  editor,
  eventually,
  finished,
  follow,
  heldEditor,
  joinAs,
  LEAKY_ENV,
  suggested,
  User,
} from './helpers/cli';
import { bundle } from './helpers/paths';
import { startServer, type TestServer } from './helpers/server';
import { answered, Terminal } from './helpers/tmux';

let server: TestServer;
let owner: User;
let guest: User;

beforeAll(async () => {
  server = await startServer();
  owner = new User(server.url);
  guest = new User(server.url);
});
// Each test in a space of its own, the default of both (Gus a participant): the documents, locks
// and versions a test leaves are no other test's to meet, whatever the order they run in.
beforeEach(async () => {
  expect((await owner.run(['space', 'create', 'Docs'])).code).toBe(0);
  await joinAs(owner, guest, 'Gus');
});
afterAll(async () => {
  await server?.close();
  owner?.remove();
  guest?.remove();
});

describe('create, list, show, write, download, history, diff, restore', () => {
  it('goes through a document’s life by name and by id', async () => {
    const source = join(guest.home, 'plan.md');
    writeFileSync(source, '# Plan\n\n- scope\n');
    const created = await guest.run(['artifact', 'create', 'plan.md', '--file', source, '--json']);
    expect(created.code).toBe(0);
    const doc = created.json();
    expect(doc).toMatchObject({
      name: 'plan.md',
      version: 1,
      content: '# Plan\n\n- scope\n',
      type: 'markdown',
    });

    // A second of the name (any case) is refused: every command given the name would ask for an id.
    for (const name of ['plan.md', 'Plan.MD']) {
      const twice = await owner.run(['artifact', 'create', name]);
      expect({ name, code: twice.code }).toEqual({ name, code: 6 });
      expect(twice.stderr).toContain('Docs already has a document called "plan.md"');
      expect(twice.stderr).toContain('`convene artifact edit "plan.md"`');
    }
    const blank = await owner.run(['artifact', 'create', '   ']);
    expect(blank.code).toBe(2);
    expect(blank.stderr).toContain('the document’s name cannot be blank');

    const list = (await owner.run(['artifact', 'list', '--json'])).json();
    expect(list.map((a: any) => [a.name, a.version, a.id])).toEqual([['plan.md', 1, doc.id]]);
    // The API's list items, as the other listings' --json: each document whole, content included.
    expect(list[0]).toEqual((await owner.run(['artifact', 'show', 'plan.md', '--json'])).json());
    expect(list[0]).toMatchObject({
      content: '# Plan\n\n- scope\n',
      type: 'markdown',
      createdBy: expect.any(String),
    });
    const table = await owner.run(['artifact', 'list']);
    expect(table.stdout).toMatch(/plan\.md\s+[0-9a-f-]{36}\s+1/);

    const shown = await owner.run(['artifact', 'show', doc.id.slice(0, 8)]);
    expect(shown.stdout).toContain('# Plan\n\n- scope\n');
    expect(shown.stdout).toMatch(/version\s+1, updated .* by Gus/);

    const next = join(guest.home, 'plan2.md');
    writeFileSync(next, '# Plan\n\n- scope\n- dates\n');
    const written = await guest.run([
      'artifact',
      'write',
      'plan.md',
      '--file',
      next,
      '--base-version',
      '1',
      '--json',
    ]);
    expect(written.code).toBe(0);
    expect(written.json()).toMatchObject({ version: 2, content: '# Plan\n\n- scope\n- dates\n' });
    // The write took the lock and released it.
    expect((await byName(owner, 'plan.md')).lockedBy).toBeUndefined();

    const stale = await guest.run(['artifact', 'write', 'plan.md', '--file', source, '--base-version', '1']);
    expect(stale.code).toBe(6);
    // What changed, how to see it, and the retry.
    expect(stale.stderr).toContain('"plan.md" is at version 2 now, not 1');
    expect(stale.stderr).toContain('`convene artifact diff "plan.md" 1 2`');
    expect(stale.stderr).toContain('`--base-version 2`');
    expect((await byName(owner, 'plan.md')).version).toBe(2);

    expect(
      (await guest.run(['artifact', 'write', 'plan.md', '--file', '-'], { input: 'piped\n' })).code,
    ).toBe(0);

    // Nothing on stdin (a command before the pipe that failed) is refused, not saved as a version.
    const empty = await guest.run(['artifact', 'write', 'plan.md', '--file', '-'], { input: '' });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('nothing came on stdin');
    expect(empty.stderr).toContain('--file /dev/null');
    expect((await byName(owner, 'plan.md')).version).toBe(3);

    const downloaded = await owner.run(['artifact', 'download', 'plan.md']);
    expect(downloaded.stdout).toBe('piped\n');
    const out = join(owner.home, 'copy.md');
    const saved = await owner.run(['artifact', 'download', 'plan.md', '-o', out, '--json']);
    // Which version the file holds, with --json as in words.
    expect(saved.json()).toMatchObject({ name: 'plan.md', version: 3, file: out, bytes: 6 });
    expect((await owner.run(['artifact', 'download', 'plan.md', '--json'])).json()).toMatchObject({
      version: 3,
      content: 'piped\n',
    });
    expect(readFileSync(out, 'utf8')).toBe('piped\n');
    // A directory, as `cp` takes one: the document in it, under its name.
    const into = await owner.run(['artifact', 'download', 'plan.md', '-o', owner.home, '--json']);
    expect(into.code).toBe(0);
    expect(into.json()).toMatchObject({ version: 3, file: join(owner.home, 'plan.md') });
    expect(readFileSync(join(owner.home, 'plan.md'), 'utf8')).toBe('piped\n');
    // A directory that is not there: said so, exit 5, as a file's missing directory is.
    const noDir = await owner.run(['artifact', 'download', 'plan.md', '-o', join(owner.home, 'nowhere/')]);
    expect(noDir.code).toBe(5);
    expect(noDir.stderr).toContain(`cannot save into ${join(owner.home, 'nowhere/')}: no such directory`);
    // Under its name as it is: two documents whose names differ in a space get two files.
    for (const name of ['a b.md', 'a-b.md']) {
      await owner.run(['artifact', 'create', name, '--file', '-'], { input: `${name}\n` });
      expect((await owner.run(['artifact', 'download', name, '-o', owner.home])).code).toBe(0);
      expect(readFileSync(join(owner.home, name), 'utf8')).toBe(`${name}\n`);
    }
    // `-o -` is stdout, as `--file -` is stdin: no file named `-`.
    const dash = await owner.run(['artifact', 'download', 'plan.md', '-o', '-']);
    expect(dash).toMatchObject({ code: 0, stdout: 'piped\n' });
    expect(existsSync(join(owner.home, '-'))).toBe(false);
    const nowhere = await owner.run([
      'artifact',
      'download',
      'plan.md',
      '-o',
      join(owner.home, 'no/dir/x.md'),
    ]);
    expect(nowhere.code).toBe(5);
    expect(nowhere.stderr).toContain(
      `cannot open ${join(owner.home, 'no/dir/x.md')}: no such file or directory`,
    );
    expect(nowhere.stderr).not.toContain('bug');
    // A full disk is the disk's failure, named with the file, not a bug of convene.
    const full = await owner.run(['artifact', 'download', 'plan.md', '-o', '/dev/full']);
    expect(full.code).toBe(1);
    expect(full.stderr).toContain('cannot write /dev/full: no space left on the device');
    expect(full.stderr).not.toContain('bug');

    const history = (await owner.run(['artifact', 'history', 'plan.md', '--json'])).json();
    expect(history.map((v: any) => v.version)).toEqual([3, 2, 1]);
    const diff = await owner.run(['artifact', 'diff', 'plan.md', '1', '2']);
    expect(diff.code).toBe(0);
    expect(diff.stdout).toContain('+- dates');
    expect((await owner.run(['artifact', 'diff', 'plan.md', '1', 'two'])).code).toBe(2);
    // Without versions: what the last save changed (2 → 3).
    const last = (await owner.run(['artifact', 'diff', 'plan.md', '--json'])).json();
    expect(last).toMatchObject({ from: 2, to: 3, diff: expect.stringContaining('+piped') });
    expect((await owner.run(['artifact', 'diff', 'plan.md', '2', '--json'])).json()).toMatchObject({
      from: 2,
      to: 3,
    });
    // Nothing to show is said, not printed as an empty line.
    const first = await owner.run(['artifact', 'diff', 'plan.md', '1', '1']);
    expect(first.code).toBe(0);
    expect(first.stdout).toBe('');
    expect(first.stderr).toContain('Nothing to compare: FROM and TO are both version 1 of "plan.md".');
    const noVersion = await owner.run(['artifact', 'restore', 'plan.md']);
    expect(noVersion.code).toBe(2);
    expect(noVersion.stderr).toContain('Usage: convene artifact restore ARTIFACT VERSION');

    const restored = await owner.run(['artifact', 'restore', 'plan.md', '2', '--json']);
    expect(restored.code).toBe(0);
    expect(restored.json()).toMatchObject({ version: 4, content: '# Plan\n\n- scope\n- dates\n' });

    const missing = await owner.run(['artifact', 'show', 'nope.md']);
    expect(missing.code).toBe(5);
    expect(missing.stderr).toContain('no document "nope.md" in Docs');
    expect(missing.stderr).toContain('convene artifact list');
    expect((await owner.run(['artifact', 'show'])).code).toBe(2);
  });

  it('locks and unlocks; a write into someone else’s lock names the holder (exit 6); the owner force-unlocks', async () => {
    await owner.run(['artifact', 'create', 'locked.md']);
    const single = await owner.run(['artifact', 'diff', 'locked.md']);
    // Nothing before version 1: said, exit 0 (no usage error for a plain question).
    expect(single.code).toBe(0);
    expect(single.stderr).toContain(
      'Version 1 is the first of "locked.md": there is nothing before it to compare with. `convene artifact show "locked.md"` shows it.',
    );
    expect((await owner.run(['artifact', 'diff', 'locked.md', '--json'])).json()).toMatchObject({
      from: null,
      to: 1,
      diff: '',
    });
    const lock = await owner.run(['artifact', 'lock', 'locked.md', '--json']);
    expect(lock.code).toBe(0);
    const { lockedBy, lockExpiresAt } = lock.json();
    const host = owner.credentials().hosts[server.url];
    expect(lockedBy).toBe(host.spaces[host.defaultSpace].participantId);

    const file = join(guest.home, 'x.md');
    writeFileSync(file, 'mine');
    const refused = await guest.run(['artifact', 'write', 'locked.md', '--file', file]);
    expect(refused.code).toBe(6);
    expect(refused.stderr).toMatch(/"locked\.md" is locked by \S+ until/);
    const refusedJson = await guest.run(['artifact', 'write', 'locked.md', '--file', file, '--json']);
    // The server's code and status too, for a script to branch on, and the holder's name.
    const holderName = /is locked by (\S+) until/.exec(refused.stderr)![1];
    expect(JSON.parse(refusedJson.stderr)).toMatchObject({
      code: 'lock_held',
      status: 423,
      lockedBy,
      lockedByName: holderName,
      lockExpiresAt,
      exitCode: 6,
    });

    // The holder writes and keeps the lock.
    const holderFile = join(owner.home, 'o.md');
    writeFileSync(holderFile, 'owner text');
    expect((await owner.run(['artifact', 'write', 'locked.md', '--file', holderFile])).code).toBe(0);
    expect((await byName(owner, 'locked.md')).lockedBy).toBe(lockedBy);

    // Gus takes a lock; the owner force-unlocks it.
    expect((await owner.run(['artifact', 'unlock', 'locked.md'])).code).toBe(0);
    expect((await guest.run(['artifact', 'lock', 'locked.md'])).code).toBe(0);
    const forced = await owner.run(['artifact', 'unlock', 'locked.md']);
    expect(forced.code).toBe(0);
    expect(forced.stderr).toContain('Released Gus');
    expect((await byName(owner, 'locked.md')).lockedBy).toBeUndefined();
    // Unlocking it again claims nothing: it was not locked (exit 0, idempotent).
    const again = await owner.run(['artifact', 'unlock', 'locked.md']);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain(
      'locked.md was not locked (if you held a lock on it, it had lapsed or was released); nothing to release.',
    );
    expect(again.stderr).not.toContain('✓');
    const againJson = await owner.run(['artifact', 'unlock', 'locked.md', '--json']);
    expect(againJson.json()).toMatchObject({ name: 'locked.md', wasLocked: false });
  });

  it('waits with --wait for someone else’s lock: writes once it is released, says so when the time is up (exit 6); Ctrl-C stops the wait (130)', async () => {
    await owner.run(['artifact', 'create', 'wait.md']);
    expect((await guest.run(['artifact', 'lock', 'wait.md'])).code).toBe(0);
    const file = join(owner.home, 'wait.md');
    writeFileSync(file, 'after the wait');

    const started = Date.now();
    const late = await owner.run(['artifact', 'write', 'wait.md', '--file', file, '--wait', '2s']);
    expect(late.code).toBe(6);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
    expect(late.stderr).toMatch(
      /"wait\.md" is locked by Gus until .*; waiting up to 2s for it \(Ctrl-C to stop\)/,
    );
    expect(late.stderr).toMatch(/✗ "wait\.md" is locked by Gus until .*; waited 2s\n/);
    expect((await byName(owner, 'wait.md')).version).toBe(1);

    // Released while the write waits: it takes the lock, writes, and releases it.
    const writing = follow(owner, ['artifact', 'write', 'wait.md', '--file', file, '--wait', '1m']);
    await writing.waitFor('waiting up to 1m for it', { in: 'stderr' });
    expect((await guest.run(['artifact', 'unlock', 'wait.md'])).code).toBe(0);
    const written = await writing.done;
    expect(written.code).toBe(0);
    expect(written.stderr).toContain('Saved wait.md as version 2');
    const after = await byName(owner, 'wait.md');
    expect(after).toMatchObject({ version: 2 });
    expect(after.lockedBy).toBeUndefined();

    // lock --wait, stopped by Ctrl-C: nothing taken.
    expect((await guest.run(['artifact', 'lock', 'wait.md'])).code).toBe(0);
    const locking = follow(owner, ['artifact', 'lock', 'wait.md', '--wait', '10m']);
    await locking.waitFor('waiting up to 10m for it', { in: 'stderr' });
    const stopped = await locking.interrupt();
    expect(stopped.code).toBe(130);
    expect(stopped.stdout).toBe('');
    expect(stopped.stderr).toContain('✗ stopped waiting for the lock on "wait.md": nothing was done');
    const guestId = (await guest.run(['artifact', 'lock', 'wait.md', '--json'])).json().lockedBy;
    expect((await byName(owner, 'wait.md')).lockedBy).toBe(guestId);

    // lock --wait, released meanwhile: the lock is the waiter's.
    const taking = follow(owner, ['artifact', 'lock', 'wait.md', '--wait', '1m']);
    await taking.waitFor('waiting up to 1m for it', { in: 'stderr' });
    expect((await guest.run(['artifact', 'unlock', 'wait.md'])).code).toBe(0);
    const taken = await taking.done;
    expect(taken.code).toBe(0);
    expect(taken.stderr).toMatch(/✓ Locked wait\.md at version \d+ until/);
    const holder = (await byName(owner, 'wait.md')).lockedBy;
    expect(holder).toBeDefined();
    expect(holder).not.toBe(guestId);
    expect((await owner.run(['artifact', 'unlock', 'wait.md'])).code).toBe(0);

    // edit --wait opens the editor once the lock is free.
    expect((await guest.run(['artifact', 'lock', 'wait.md'])).code).toBe(0);
    const ed = editor(owner, 'append-after-wait', 'printf "edited after the wait\\n" >> "$1"');
    const editingLater = follow(owner, ['artifact', 'edit', 'wait.md', '--wait', '1m'], {
      env: { EDITOR: ed },
    });
    await editingLater.waitFor('waiting up to 1m for it', { in: 'stderr' });
    expect((await guest.run(['artifact', 'unlock', 'wait.md'])).code).toBe(0);
    const edited = await editingLater.done;
    expect(edited.code).toBe(0);
    expect(edited.stderr).toContain('Saved wait.md as version 3');
    expect((await guest.run(['artifact', 'download', 'wait.md'])).stdout).toBe(
      'after the waitedited after the wait\n',
    );

    for (const wait of ['soon', '0s', '2d']) {
      const bad = await owner.run(['artifact', 'edit', 'wait.md', '--wait', wait]);
      expect({ wait, code: bad.code }).toEqual({ wait, code: 2 });
      expect(bad.stderr).toContain(
        `--wait takes a duration from 1s to 24h (e.g. 30s, 5m, 1h), not "${wait}"`,
      );
    }
  });

  it('write --wait writes only over the version it read before waiting: what the holder saved meanwhile is never replaced unseen', async () => {
    await owner.run(['artifact', 'create', 'meanwhile.md']);
    expect((await guest.run(['artifact', 'lock', 'meanwhile.md'])).code).toBe(0);
    const mine = join(owner.home, 'meanwhile-mine.md');
    writeFileSync(mine, 'my text, based on version 1');
    const theirs = join(guest.home, 'meanwhile-theirs.md');
    writeFileSync(theirs, 'their text, saved while I waited');

    // Without --wait, the refusal offers it.
    const refused = await owner.run(['artifact', 'write', 'meanwhile.md', '--file', mine]);
    expect(refused.code).toBe(6);
    expect(refused.stderr).toContain('run the same command with `--wait 5m`');

    // The holder saves version 2, then unlocks: the waiting write is refused, nothing written.
    const writing = follow(owner, ['artifact', 'write', 'meanwhile.md', '--file', mine, '--wait', '1m']);
    await writing.waitFor('waiting up to 1m for it', { in: 'stderr' });
    expect((await guest.run(['artifact', 'write', 'meanwhile.md', '--file', theirs])).code).toBe(0);
    expect((await guest.run(['artifact', 'unlock', 'meanwhile.md'])).code).toBe(0);
    const late = await writing.done;
    expect(late.code).toBe(6);
    expect(late.stderr).toContain(
      '✗ "meanwhile.md" changed while you waited: version 2 was saved after version 1, the one your text would replace; nothing was written\n',
    );
    expect(late.stderr).toContain('`convene artifact diff "meanwhile.md" 1 2` shows what they saved');
    expect(late.stderr).toContain('write over it on purpose with `--base-version 2`');
    const kept = await byName(owner, 'meanwhile.md');
    expect(kept).toMatchObject({ version: 2 });
    expect(kept.lockedBy).toBeUndefined();
    expect((await owner.run(['artifact', 'download', 'meanwhile.md'])).stdout).toBe(
      'their text, saved while I waited',
    );

    // Nothing saved while it waited: the text is written, as before.
    expect((await guest.run(['artifact', 'lock', 'meanwhile.md'])).code).toBe(0);
    const again = follow(owner, ['artifact', 'write', 'meanwhile.md', '--file', mine, '--wait', '1m']);
    await again.waitFor('waiting up to 1m for it', { in: 'stderr' });
    expect((await guest.run(['artifact', 'unlock', 'meanwhile.md'])).code).toBe(0);
    const written = await again.done;
    expect(written.code).toBe(0);
    expect(written.stderr).toContain('Saved meanwhile.md as version 3');
  });

  it('points each hint at the right thing: the document’s versions, its own unlock, and who can force a lock', async () => {
    await owner.run(['artifact', 'create', 'hints.md']);
    const version = await owner.run(['artifact', 'diff', 'hints.md', '7']);
    expect(version.code).toBe(5);
    expect(version.stderr).toContain('version 7 of "hints.md" not found');
    expect(version.stderr).toContain('`convene artifact history "hints.md"`');
    expect(version.stderr).not.toContain('convene participants');
    const restore = await owner.run(['artifact', 'restore', 'hints.md', '7']);
    expect(restore.code).toBe(5);
    expect(restore.stderr).toContain('`convene artifact history "hints.md"`');

    // The lock's hint names the document to unlock.
    const locked = await guest.run(['artifact', 'lock', 'hints.md']);
    expect(locked.code).toBe(0);
    expect(locked.stderr).toContain('release with `convene artifact unlock "hints.md"`');
    // Someone else's lock: a participant asks the owner; the owner can release it.
    const file = join(owner.home, 'h.md');
    writeFileSync(file, 'text');
    const asOwner = await owner.run(['artifact', 'write', 'hints.md', '--file', file]);
    expect(asOwner.code).toBe(6);
    expect(asOwner.stderr).toContain('"hints.md" is locked by Gus');
    expect(asOwner.stderr).not.toContain('ask the owner');
    expect(asOwner.stderr).toContain('`convene artifact unlock "hints.md"`');
    expect((await guest.run(['artifact', 'unlock', 'hints.md'])).code).toBe(0);
    expect((await owner.run(['artifact', 'lock', 'hints.md'])).code).toBe(0);
    const asGuest = await guest.run(['artifact', 'write', 'hints.md', '--file', file]);
    expect(asGuest.code).toBe(6);
    // The owner holds it: nobody to force it, they release it themselves.
    expect(asGuest.stderr).toContain('The owner holds it');
    expect(asGuest.stderr).toContain('ask them to release it');
    expect(asGuest.stderr).not.toContain('force');
    expect((await owner.run(['artifact', 'unlock', 'hints.md'])).code).toBe(0);
  });

  it('gives a participant who meets someone’s lock the unlock as the owner runs it: the space by its id, without the --url only the participant saved', async () => {
    expect((await owner.run(['artifact', 'create', 'r.md'])).code).toBe(0);
    const spaceId = owner.credentials().hosts[server.url].defaultSpace as string;
    expect((await guest.run(['artifact', 'lock', 'r.md'])).code).toBe(0);
    // Max joined through the other name of the server: his keys are saved under it, not the owner's.
    const alias = server.url.replace('127.0.0.1', 'localhost');
    const max = new User(undefined);
    try {
      const { humanLink } = (await owner.run(['invite', '--json'])).json();
      expect((await max.run(['join', humanLink, '--name', 'Max', '--url', alias])).code).toBe(0);
      const refused = await max.run(['--url', alias, 'artifact', 'unlock', 'r.md']);
      expect(refused.code).toBe(6);
      expect(refused.stderr).toContain('ask the owner to release it');
      const line = suggested(refused.stderr).find((words) => words[1] === 'unlock');
      expect(line).toEqual(['artifact', 'unlock', 'r.md', '--space', spaceId]);
      // The owner's default is another space now: the line names this one all the same.
      expect((await owner.run(['space', 'create', 'Elsewhere'])).code).toBe(0);
      const released = await owner.run([...line!, '--yes']);
      expect(released.code, released.stderr).toBe(0);
      expect(released.stderr).toContain('Released Gus’s lock on r.md');
    } finally {
      max.remove();
    }
  });

  it('locks at a version, and the write its hint suggests is refused once the lock lapsed and someone saved', async () => {
    await owner.run(['artifact', 'create', 'lapse.md', '--file', '-'], { input: 'v1\n' });
    const locked = await guest.run(['artifact', 'lock', 'lapse.md']);
    expect(locked.code).toBe(0);
    expect(locked.stderr).toMatch(/^✓ Locked lapse\.md at version 1 until /);
    expect(locked.stderr).toContain(
      'Write with `convene artifact write "lapse.md" --file F --base-version 1` (refused, should your lock lapse',
    );
    // Written as the hint says, then as the write's own hint says (the lock kept, over its save).
    const file = join(guest.home, 'lapse.md');
    let hint = locked.stderr;
    for (const text of ['first pass\n', 'second pass\n']) {
      writeFileSync(file, text);
      const write = suggested(hint)[0]!.map((word) => (word === 'F' ? file : word));
      const written = await guest.run(write);
      expect({ text, code: written.code, stderr: written.stderr }).toMatchObject({ text, code: 0 });
      hint = written.stderr;
    }
    expect(hint).toContain(
      'You still hold the lock: write again with `convene artifact write "lapse.md" --file F --base-version 3`',
    );
    expect((await byName(owner, 'lapse.md')).version).toBe(3);
    expect((await owner.run(['artifact', 'download', 'lapse.md', '-o', '-'])).stdout).toBe('second pass\n');
    // The lock gone (the owner releases it, as a lapse would) and another version saved meanwhile.
    expect((await owner.run(['artifact', 'unlock', 'lapse.md', '--yes'])).code).toBe(0);
    await owner.run(['artifact', 'write', 'lapse.md', '--file', '-'], { input: 'the owner’s text\n' });
    // The write as the hint has it, with the guest's file: refused, the owner's text kept.
    writeFileSync(file, 'the guest’s text\n');
    const write = suggested(locked.stderr)[0]!.map((word) => (word === 'F' ? file : word));
    const refused = await guest.run(write);
    expect(refused.code).toBe(6);
    expect(refused.stderr).toContain('"lapse.md" is at version 4 now, not 1');
    const doc = await byName(owner, 'lapse.md');
    expect(doc.version).toBe(4);
    expect((await owner.run(['artifact', 'download', 'lapse.md', '-o', '-'])).stdout).toBe(
      'the owner’s text\n',
    );
    // --json has the version too, for a script that locks, then writes.
    const json = await guest.run(['artifact', 'lock', 'lapse.md', '--json']);
    expect(json.json()).toEqual({
      id: expect.any(String),
      name: 'lapse.md',
      lockedBy: expect.any(String),
      lockExpiresAt: expect.any(String),
      version: 4,
    });
    expect((await guest.run(['artifact', 'unlock', 'lapse.md'])).code).toBe(0);
  });

  it('takes the content from stdin piped or redirected into it, or with --file -, within the 1 MiB a document holds', async () => {
    const text = async (name: string) => (await guest.run(['artifact', 'download', name])).stdout;
    // `… | convene artifact create`: the pipe is the content, as `--file -` says.
    const piped = await guest.run(['artifact', 'create', 'piped.md'], {
      stdin: 'pipe',
      input: 'piped content\n',
    });
    expect(piped.code).toBe(0);
    expect(await text('piped.md')).toBe('piped content\n');
    // `convene artifact write < F` and `… | convene artifact write`: a new version without --file.
    const redirected = await guest.run(['artifact', 'write', 'piped.md', '--json'], {
      stdin: 'file',
      input: 'from a file\n',
    });
    expect(redirected.code).toBe(0);
    expect(redirected.json()).toMatchObject({ version: 2, content: 'from a file\n' });
    expect((await guest.run(['artifact', 'write', 'piped.md'], { stdin: 'pipe', input: 'w\n' })).code).toBe(
      0,
    );
    expect(await text('piped.md')).toBe('w\n');
    expect(
      (
        await guest.run(['artifact', 'create', 'dashed.md', '--file', '-'], {
          stdin: 'pipe',
          input: 'dash\n',
        })
      ).code,
    ).toBe(0);
    expect(await text('dashed.md')).toBe('dash\n');
    // What is not UTF-8 (a Latin-1 file, bytes piped in) is refused, not sent with U+FFFD in
    // place of its bytes: exit 2, nothing written.
    const latin1 = join(guest.home, 'latin1.md');
    writeFileSync(latin1, Buffer.from('caf\xe9\n', 'latin1'));
    for (const [args, options] of [
      [['artifact', 'write', 'dashed.md', '--file', latin1], {}],
      [
        ['artifact', 'write', 'dashed.md'],
        { stdin: 'pipe', input: Buffer.from([0xff, 0xfe, 0x20, 0x62, 0x0a]) },
      ],
      [['artifact', 'create', 'latin1.md', '--file', latin1], {}],
    ] as const) {
      const refused = await guest.run([...args], options);
      expect({ args, code: refused.code }).toEqual({ args, code: 2 });
      expect(refused.stderr).toMatch(/^✗ (stdin|\S+latin1\.md) is not UTF-8 text \(.*\): nothing was sent\n/);
      expect(refused.stderr).toContain('iconv -f ENCODING -t utf-8 FILE');
    }
    expect(await text('dashed.md')).toBe('dash\n');
    expect((await byName(guest, 'dashed.md')).version).toBe(1);
    // UTF-8 goes as it is.
    expect(
      (await guest.run(['artifact', 'write', 'dashed.md'], { stdin: 'pipe', input: 'café ✓\n' })).code,
    ).toBe(0);
    expect(await text('dashed.md')).toBe('café ✓\n');
    // --file wins over what stdin holds.
    const file = join(guest.home, 'given.md');
    writeFileSync(file, 'given\n');
    expect(
      (await guest.run(['artifact', 'write', 'dashed.md', '--file', file], { stdin: 'pipe', input: 'no\n' }))
        .code,
    ).toBe(0);
    expect(await text('dashed.md')).toBe('given\n');

    // A socket (a harness's stdin) or /dev/null is no content: create makes an empty document and
    // write asks for --file, without waiting for stdin.
    for (const stdin of ['socket', 'null'] as const) {
      const created = await guest.run(['artifact', 'create', `empty-${stdin}.md`], {
        stdin,
        input: 'not this',
      });
      expect({ stdin, code: created.code }).toEqual({ stdin, code: 0 });
      expect(await text(`empty-${stdin}.md`)).toBe('');
      const write = await guest.run(['artifact', 'write', 'piped.md'], { stdin, input: 'not this' });
      expect({ stdin, code: write.code }).toEqual({ stdin, code: 2 });
      expect(write.stderr).toContain('--file is required');
      expect(write.stderr).toContain('or pipe the content in');
    }
    // An empty pipe (a command before it that failed) is no new version, as with --file -.
    const nothing = await guest.run(['artifact', 'write', 'piped.md'], { stdin: 'pipe', input: '' });
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain('nothing came on stdin');
    expect((await byName(owner, 'piped.md')).version).toBe(3);

    // More than a document holds is said in its terms (1 MiB), before anything is sent, from a
    // pipe, a file or --file alike: not the server's 2 MiB limit on a request's body.
    const big = 'x'.repeat(3 * 1024 * 1024);
    const bigFile = join(guest.home, 'big.md');
    writeFileSync(bigFile, big);
    for (const [args, options] of [
      [['artifact', 'create', 'big.md'], { stdin: 'pipe', input: big }],
      [['artifact', 'write', 'piped.md'], { stdin: 'file', input: big }],
      [['artifact', 'write', 'piped.md', '--file', bigFile], {}],
    ] as const) {
      const tooBig = await guest.run([...args], options);
      expect({ args, code: tooBig.code }).toEqual({ args, code: 2 });
      expect(tooBig.stderr).toContain('a document holds at most 1 MiB');
      expect(tooBig.stderr).not.toContain('2 MiB');
    }
    expect(await text('piped.md')).toBe('w\n');
    expect((await guest.run(['artifact', 'list', '--json'])).json().map((a: any) => a.name)).not.toContain(
      'big.md',
    );

    const help = (await guest.run(['artifact', 'write', '--help'])).stdout;
    expect(help).toContain('piped or redirected');
  });
});

describe('artifact write and restore: what they leave, and what they do not do', () => {
  it('show in --json the document as it is after them: no lock they took and released, the lock you held kept', async () => {
    await owner.run(['artifact', 'create', 'after.md', '--file', '-'], { input: 'one\n' });
    const file = join(guest.home, 'after.md');
    writeFileSync(file, 'two\n');
    const written = await guest.run(['artifact', 'write', 'after.md', '--file', file, '--json']);
    expect(written.code).toBe(0);
    const doc = written.json();
    expect(doc).toMatchObject({ name: 'after.md', version: 2, content: 'two\n', changed: true });
    // The write took the lock and released it: what --json shows says so, as the list does.
    for (const field of ['lockedBy', 'lockedAt', 'lockExpiresAt']) expect(doc).not.toHaveProperty(field);
    expect((await byName(owner, 'after.md')).lockedBy).toBeUndefined();
    const restored = await guest.run(['artifact', 'restore', 'after.md', '1', '--json']);
    expect(restored.code).toBe(0);
    expect(restored.json()).toMatchObject({ version: 3, content: 'one\n', changed: true });
    expect(restored.json()).not.toHaveProperty('lockedBy');
    expect(restored.json()).not.toHaveProperty('lockExpiresAt');

    // A lock held before is held after, and shown.
    const { lockedBy } = (await guest.run(['artifact', 'lock', 'after.md', '--json'])).json();
    const held = (await guest.run(['artifact', 'write', 'after.md', '--file', file, '--json'])).json();
    expect(held).toMatchObject({ version: 4, lockedBy, lockExpiresAt: expect.any(String) });
    const heldRestore = (await guest.run(['artifact', 'restore', 'after.md', '1', '--json'])).json();
    expect(heldRestore).toMatchObject({ version: 5, lockedBy, lockExpiresAt: expect.any(String) });
    expect((await byName(owner, 'after.md')).lockedBy).toBe(lockedBy);
    expect((await guest.run(['artifact', 'unlock', 'after.md'])).code).toBe(0);
  });

  it('write nothing for the text the document holds already, and say so (exit 0), as edit does', async () => {
    await owner.run(['artifact', 'create', 'same.md', '--file', '-'], { input: 'alpha\n' });
    const file = join(guest.home, 'same.md');
    writeFileSync(file, 'beta\n');
    expect((await guest.run(['artifact', 'write', 'same.md', '--file', file])).code).toBe(0);

    const again = await guest.run(['artifact', 'write', 'same.md', '--file', file]);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('same.md already holds this text (version 2); nothing written.');
    const againJson = await guest.run(['artifact', 'write', 'same.md', '--file', file, '--json']);
    expect(againJson.json()).toMatchObject({
      name: 'same.md',
      version: 2,
      content: 'beta\n',
      changed: false,
    });
    // With a --base-version that is current, the same.
    const based = await guest.run(['artifact', 'write', 'same.md', '--file', file, '--base-version', '2']);
    expect(based.code).toBe(0);
    expect(based.stderr).toContain('nothing written');

    // Restoring the latest version, or an earlier one of the same text, writes nothing either.
    const latest = await guest.run(['artifact', 'restore', 'same.md', '2']);
    expect(latest.code).toBe(0);
    expect(latest.stderr).toContain('Version 2 is the latest of same.md already; nothing written.');
    expect((await guest.run(['artifact', 'restore', 'same.md', '1'])).code).toBe(0);
    const sameText = await guest.run(['artifact', 'restore', 'same.md', '1', '--json']);
    expect(sameText.code).toBe(0);
    expect(sameText.json()).toMatchObject({ version: 3, content: 'alpha\n', changed: false });
    expect((await guest.run(['artifact', 'restore', 'same.md', '1'])).stderr).toContain(
      'Version 1 of same.md is the same text as the latest, version 3; nothing written.',
    );
    const history = (await owner.run(['artifact', 'history', 'same.md', '--json'])).json();
    expect(history.map((v: any) => v.version)).toEqual([3, 2, 1]);
  });

  it('refuse a stale --base-version, or write nothing, without taking the lock (no lock or unlock in tail)', async () => {
    await owner.run(['artifact', 'create', 'quiet.md', '--file', '-'], { input: 'v1\n' });
    const file = join(guest.home, 'quiet.md');
    writeFileSync(file, 'v2\n');
    expect((await guest.run(['artifact', 'write', 'quiet.md', '--file', file])).code).toBe(0);
    const tail = follow(owner, ['tail', '--json', '--lines', '0']);
    try {
      await tail.waitFor('"event":"context"');
      writeFileSync(file, 'mine\n');
      const stale = await guest.run(['artifact', 'write', 'quiet.md', '--file', file, '--base-version', '1']);
      expect(stale.code).toBe(6);
      expect(stale.stderr).toContain('--base-version 1 is not the current version of "quiet.md" (2)');
      expect(stale.stderr).toContain('"quiet.md" is at version 2 now, not 1');
      expect(stale.stderr).toContain('`convene artifact diff "quiet.md" 1 2`');
      const staleJson = await guest.run([
        'artifact',
        'write',
        'quiet.md',
        '--file',
        file,
        '--base-version',
        '1',
        '--json',
      ]);
      // The fields of the server's own 409, as every conflict's --json has them.
      expect(JSON.parse(staleJson.stderr)).toMatchObject({
        code: 'version_conflict',
        status: 409,
        version: 2,
        exitCode: 6,
      });
      // A version the document has not reached: no diff to suggest (it would fail), its history.
      const ahead = await guest.run(['artifact', 'write', 'quiet.md', '--file', file, '--base-version', '9']);
      expect(ahead.code).toBe(6);
      expect(ahead.stderr).toContain(
        '"quiet.md" has no version 9: it is at version 2. `convene artifact history "quiet.md"` lists its versions',
      );
      expect(ahead.stderr).not.toContain('artifact diff');
      writeFileSync(file, 'v2\n');
      expect((await guest.run(['artifact', 'write', 'quiet.md', '--file', file])).stderr).toContain(
        'nothing written',
      );
      expect((await guest.run(['artifact', 'restore', 'quiet.md', '2'])).stderr).toContain('nothing written');
      expect((await guest.run(['artifact', 'restore', 'quiet.md', '9'])).code).toBe(5);
      // A message after them: once tail shows it, it has shown whatever they caused.
      expect((await guest.run(['send', 'after the writes that were not'])).code).toBe(0);
      await tail.waitFor('after the writes that were not');
      const events = tail
        .stdout()
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).event);
      expect(events).not.toContain('artifact-locked');
      expect(events).not.toContain('artifact-unlocked');
      expect(events).not.toContain('artifact-updated');
    } finally {
      await tail.interrupt();
    }
    expect((await byName(owner, 'quiet.md')).version).toBe(2);
  });
});

/** The `artifact write` a failed edit's hint ends with (`… save it with: convene …`), as arguments. */
const writeSuggested = (stderr: string): string[] | undefined => {
  const line = stderr.match(/save it with: convene (.+)$/im)?.[1];
  return line === undefined ? undefined : suggested(`\`convene ${line}\``)[0];
};

/**
 * The guest edits edit.md in a held editor (`name`, typing `text` as `write` says) while the owner
 * forces the guest's lock open and takes it, then closes the editor: the refused save (exit 6).
 */
async function editWhileOwnerTakesLock(
  name: string,
  typed: { text: string; write: 'first' | 'last' },
): Promise<Awaited<ReturnType<User['run']>>> {
  const held = heldEditor(guest, name, typed);
  const { done } = await editing(guest, 'edit.md', held.ed, held.opened);
  expect((await owner.run(['artifact', 'unlock', 'edit.md'])).code).toBe(0);
  expect((await owner.run(['artifact', 'lock', 'edit.md'])).code).toBe(0);
  held.release();
  const result = await done;
  expect(result.code).toBe(6);
  return result;
}

describe('artifact edit', () => {
  it('saves what the editor saved as a new version over the version it opened, and unlocks', async () => {
    await guest.run(['artifact', 'create', 'edit.md', '--file', '-'], { input: 'first line\n' });
    const ed = editor(guest, 'append', 'printf "added in the editor\\n" >> "$1"');
    const edited = await guest.run(['artifact', 'edit', 'edit.md', '--json'], { env: { EDITOR: ed } });
    expect(edited.code).toBe(0);
    expect(edited.json()).toMatchObject({
      version: 2,
      changed: true,
      content: 'first line\nadded in the editor\n',
    });
    // The lock it took for the edit is released: its answer shows no lock, as `write`'s does.
    expect(edited.json()).not.toHaveProperty('lockedBy');
    expect(edited.json()).not.toHaveProperty('lockExpiresAt');
    const doc = await byName(owner, 'edit.md');
    expect(doc.version).toBe(2);
    expect(doc.lockedBy).toBeUndefined();
    // $VISUAL wins over $EDITOR.
    const visual = editor(guest, 'visual', 'printf "from visual\\n" >> "$1"');
    const both = await guest.run(['artifact', 'edit', 'edit.md'], {
      env: { EDITOR: '/bin/false', VISUAL: visual },
    });
    expect(both.code).toBe(0);
    // The editor is named as the one that edits, not read as the file edited.
    expect(both.stderr).toContain(`Editing edit.md (version 2) with ${visual}; locked`);
    expect(both.stderr).toContain('Saved edit.md as version 3');
  });
});

describe('artifact edit of a document saved twice before (edit.md, at version 3)', () => {
  // edit.md as the test above leaves it, its versions saved by Gus (through the API: faster than
  // three processes), no lock held.
  beforeEach(async () => {
    const host = guest.credentials().hosts[server.url];
    const { spaceId, key } = host.spaces[host.defaultSpace];
    const gus = new Convene({ baseUrl: server.url, logLevel: 'off' }).space(spaceId, key);
    const doc = await gus.artifacts.create({ name: 'edit.md', content: 'first line\n' });
    await gus.artifacts.withLock(doc.id, async (locked) => {
      await locked.write('first line\nadded in the editor\n');
      await locked.write('first line\nadded in the editor\nfrom visual\n');
    });
    const edit = await gus.artifacts.get(doc.id);
    expect(edit.version).toBe(3);
    expect(edit.lockedBy).toBeUndefined();
  });

  it('writes nothing when the text did not change', async () => {
    const unchanged = await guest.run(['artifact', 'edit', 'edit.md'], { env: { EDITOR: 'true' } });
    expect(unchanged.code).toBe(0);
    expect(unchanged.stderr).toContain('No changes to edit.md: nothing written');
    const doc = await byName(owner, 'edit.md');
    expect(doc.version).toBe(3);
    expect(doc.lockedBy).toBeUndefined();
    // --json: the document as it is after the edit, whose lock is released (as `show` has it).
    const json = await guest.run(['artifact', 'edit', 'edit.md', '--json'], { env: { EDITOR: 'true' } });
    expect(json.code).toBe(0);
    expect(json.json()).toMatchObject({ name: 'edit.md', version: 3, changed: false });
    for (const field of ['lockedBy', 'lockedAt', 'lockExpiresAt'])
      expect(json.json()).not.toHaveProperty(field);
    // A lock held before the edit is kept, and shown.
    expect((await guest.run(['artifact', 'lock', 'edit.md'])).code).toBe(0);
    const held = await guest.run(['artifact', 'edit', 'edit.md', '--json'], { env: { EDITOR: 'true' } });
    expect(held.json().lockedBy).toBe((await byName(owner, 'edit.md')).lockedBy);
    expect(held.json().lockedBy).toBeDefined();
    expect((await guest.run(['artifact', 'unlock', 'edit.md'])).code).toBe(0);
  });

  it('refuses, before locking, to open vi without a terminal when neither $VISUAL nor $EDITOR is set', async () => {
    // stdin is a pipe here, as for an agent or a script: vi would fail, or wait on the pipe with the lock kept alive.
    const blind = await guest.run(['artifact', 'edit', 'edit.md']);
    expect(blind.code).toBe(2);
    expect(blind.stderr).toContain('no editor to open');
    // The version to write over is the one there now, not "N".
    expect(blind.stderr).toContain('convene artifact write "edit.md" --file F --base-version 3');
    expect(blind.stderr).toContain('(3: the version now; refused if someone saves another first)');
    expect(blind.stderr).not.toContain('Editing');
    const doc = await byName(owner, 'edit.md');
    expect(doc.version).toBe(3);
    expect(doc.lockedBy).toBeUndefined();
    // Someone else holding the lock now: the write suggested waits it out, where it would be refused.
    expect((await owner.run(['artifact', 'lock', 'edit.md'])).code).toBe(0);
    const locked = await guest.run(['artifact', 'edit', 'edit.md']);
    expect(locked.code).toBe(2);
    expect(locked.stderr).toContain('convene artifact write "edit.md" --file F --base-version 3 --wait 5m');
    expect(locked.stderr).toMatch(/; \S.* holds its lock now, which --wait waits out\)/);
    expect((await owner.run(['artifact', 'unlock', 'edit.md'])).code).toBe(0);
  });

  it('keeps the text in a named file and unlocks when the editor exits non-zero or cannot run', async () => {
    const ed = editor(guest, 'fail', 'printf "half-done work\\n" >> "$1"\nexit 3');
    const failed = await guest.run(['artifact', 'edit', 'edit.md'], { env: { EDITOR: ed } });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('exited with 3: nothing was saved');
    const kept = failed.stderr.match(/Your text is kept in (\S+)/)?.[1];
    expect(kept).toBeDefined();
    expect(kept!.startsWith(join(guest.env.XDG_DATA_HOME!, 'convene/recovered'))).toBe(true);
    expect(readFileSync(kept!, 'utf8')).toContain('half-done work');
    const doc = await byName(owner, 'edit.md');
    expect(doc.version).toBe(3);
    expect(doc.lockedBy).toBeUndefined();

    const absent = await guest.run(['artifact', 'edit', 'edit.md'], { env: { EDITOR: 'no-such-editor' } });
    expect(absent.code).toBe(1);
    expect(absent.stderr).toContain('cannot run the editor `no-such-editor` (not found): nothing was saved');
    expect(absent.stderr).toContain('Set $VISUAL or $EDITOR');
    // Nothing was edited: no copy of the document to keep, nor a write of it to suggest.
    expect(absent.stderr).toContain('No change was saved: "edit.md" is as it was (version 3).');
    expect(absent.stderr).not.toContain('Your text is kept');
    expect((await byName(owner, 'edit.md')).lockedBy).toBeUndefined();
  });

  it('keeps the text and unlocks when Ctrl-C stops the editor (exit 130)', async () => {
    const marker = join(guest.home, 'editor-open');
    // An editor that dies of SIGINT, as `code --wait` does. Node takes the signal's default
    // action from its first instruction, so no signal can slip past it (a shell's `sleep` can).
    const ed = editor(
      guest,
      'interrupted',
      `printf "typed before Ctrl-C\\n" >> "$1"\nexec "${process.execPath}" -e 'require("fs").writeFileSync(process.argv[1], ""); setTimeout(() => {}, 60000)' "${marker}"`,
    );
    const { child, done } = await editing(guest, 'edit.md', ed, marker);
    // A terminal's Ctrl-C reaches the whole foreground group: convene and the editor.
    process.kill(-child.pid!, 'SIGINT');
    const result = await done;
    expect(result.code).toBe(130);
    expect(result.stderr).toContain('interrupted: nothing was saved');
    const kept = result.stderr.match(/Your text is kept in (\S+)/)?.[1];
    expect(readFileSync(kept!, 'utf8')).toContain('typed before Ctrl-C');
    const doc = await byName(owner, 'edit.md');
    expect(doc.version).toBe(3);
    expect(doc.lockedBy).toBeUndefined();
  });

  it('keeps the text and unlocks when convene gets SIGHUP (129) or SIGTERM (143) while the editor is open', async () => {
    for (const [signal, code, said] of [
      ['SIGHUP', 129, 'stopped by SIGHUP (the terminal closed): nothing was saved'],
      ['SIGTERM', 143, 'stopped by SIGTERM: nothing was saved'],
    ] as const) {
      // An editor that carries on through the signal: convene stops waiting for it all the same.
      const held = heldEditor(guest, `signal-${signal}`, {
        text: `typed before ${signal}`,
        write: 'first',
        ignoring: 'HUP TERM',
      });
      const { child, done } = await editing(guest, 'edit.md', held.ed, held.opened);
      // To convene alone, as `kill` sends it: the editor is told by convene.
      child.kill(signal);
      const result = await done;
      held.release();
      expect({ signal, code: result.code }).toEqual({ signal, code });
      expect(result.stderr).toContain(said);
      const kept = result.stderr.match(/Your text is kept in (\S+)/)?.[1];
      expect(kept!.startsWith(join(guest.env.XDG_DATA_HOME!, 'convene/recovered'))).toBe(true);
      expect(readFileSync(kept!, 'utf8')).toContain(`typed before ${signal}`);
      const doc = await byName(owner, 'edit.md');
      expect(doc.version).toBe(3);
      expect(doc.lockedBy).toBeUndefined();
    }
  });

  it('keeps the text and unlocks on the two SIGHUPs of a closed terminal under a shell (the kernel’s, then the shell’s)', async () => {
    const held = heldEditor(guest, 'hung-up-twice', {
      text: 'typed before the hangup',
      write: 'first',
      ignoring: 'HUP TERM',
    });
    const { child, done } = await editing(guest, 'edit.md', held.ed, held.opened);
    child.kill('SIGHUP');
    await new Promise((resolve) => setTimeout(resolve, 20));
    child.kill('SIGHUP');
    const result = await done;
    held.release();
    expect(result.code).toBe(129);
    expect(result.stderr).toContain('stopped by SIGHUP (the terminal closed): nothing was saved');
    const kept = result.stderr.match(/Your text is kept in (\S+)/)?.[1];
    expect(readFileSync(kept!, 'utf8')).toContain('typed before the hangup');
    const doc = await byName(owner, 'edit.md');
    expect(doc.lockedBy).toBeUndefined();
  });

  it('keeps the text and unlocks when the terminal window closes while the editor is open (ended by SIGHUP)', async () => {
    const held = heldEditor(guest, 'window-closed', {
      text: 'typed before the window closed',
      write: 'first',
    });
    const terminal = new Terminal(
      [process.execPath, bundle, 'artifact', 'edit', 'edit.md'],
      { ...guest.env, EDITOR: held.ed },
      guest.home,
    );
    try {
      await eventually(() => expect(existsSync(held.opened)).toBe(true));
    } finally {
      // The window closed: the editor and convene get SIGHUP, and every write to the terminal fails.
      terminal.close();
    }
    await eventually(() => expect(terminal.ended()).toBeDefined());
    held.release();
    expect(terminal.ended()).toEqual({ code: null, signal: 'SIGHUP' });
    const recovered = join(guest.env.XDG_DATA_HOME!, 'convene/recovered');
    const kept = readdirSync(recovered).filter((name) => name.endsWith('edit.md'));
    expect(kept.map((name) => readFileSync(join(recovered, name), 'utf8'))).toContainEqual(
      expect.stringContaining('typed before the window closed'),
    );
    const doc = await byName(owner, 'edit.md');
    expect(doc.version).toBe(3);
    expect(doc.lockedBy).toBeUndefined();
  });

  it('keeps an edited text over 1 MiB without sending it, unlocks, and says so (exit 2)', async () => {
    const ed = editor(guest, 'too-big', `head -c 1100000 /dev/zero | tr '\\0' x >> "$1"`);
    const tooBig = await guest.run(['artifact', 'edit', 'edit.md'], { env: { EDITOR: ed } });
    expect(tooBig.code).toBe(2);
    expect(tooBig.stderr).toContain('the edited edit.md is too large: a document holds at most 1 MiB');
    expect(tooBig.stderr).not.toContain('invalid request');
    // Saving the kept file as it is would be refused the same way: no such hint.
    expect(tooBig.stderr).not.toContain('Save it later');
    const kept = tooBig.stderr.match(/Your text is kept in (\S+)/)?.[1];
    expect(kept!.startsWith(join(guest.env.XDG_DATA_HOME!, 'convene/recovered'))).toBe(true);
    expect(readFileSync(kept!, 'utf8').length).toBeGreaterThan(1_100_000);
    const doc = await byName(owner, 'edit.md');
    expect(doc.version).toBe(3);
    expect(doc.lockedBy).toBeUndefined();
  });

  it('leaves Ctrl-C to an editor that carries on, and saves what it saves', async () => {
    const held = heldEditor(guest, 'carries-on', {
      text: 'kept going',
      write: 'first',
      ignoring: 'INT',
    });
    const { child, done } = await editing(guest, 'edit.md', held.ed, held.opened);
    process.kill(-child.pid!, 'SIGINT');
    // Twice, as an impatient person would: still the editor's.
    await new Promise((resolve) => setTimeout(resolve, 200));
    process.kill(-child.pid!, 'SIGINT');
    await new Promise((resolve) => setTimeout(resolve, 200));
    held.release();
    const result = await done;
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('Saved edit.md as version 4');
    const doc = await byName(owner, 'edit.md');
    expect(doc.version).toBe(4);
    expect(doc.lockedBy).toBeUndefined();
  });

  it('refuses when someone else holds the lock, naming them and the expiry, without opening the editor', async () => {
    expect((await owner.run(['artifact', 'lock', 'edit.md'])).code).toBe(0);
    const marker = join(guest.home, 'should-not-open');
    const ed = editor(guest, 'never', `touch "${marker}"`);
    const refused = await guest.run(['artifact', 'edit', 'edit.md'], { env: { EDITOR: ed } });
    expect(refused.code).toBe(6);
    // The time of day, or the date and time when the lock ends tomorrow (a run just before midnight).
    expect(refused.stderr).toMatch(
      /"edit\.md" is locked by \S+ until (\d{2}:\d{2}:\d{2}|\d{4}-\d{2}-\d{2} \d{2}:\d{2}) \(in \d+ (s|min)\)/,
    );
    expect(existsSync(marker)).toBe(false);
    expect((await owner.run(['artifact', 'unlock', 'edit.md'])).code).toBe(0);
  });

  it('keeps the text when the owner took the lock over while the editor was open, without trying to release it', async () => {
    const result = await editWhileOwnerTakesLock('taken-over', { text: 'mine', write: 'first' });
    expect(result.stderr).toContain('is locked by');
    expect(readFileSync(result.stderr.match(/Your text is kept in (\S+)/)![1]!, 'utf8')).toContain('mine');
    // The lock is the owner's now: there was nothing of ours to release.
    expect(result.stderr).not.toContain('could not release the lock');
    expect((await byName(owner, 'edit.md')).lockedBy).toBeDefined();
    expect((await owner.run(['artifact', 'unlock', 'edit.md'])).code).toBe(0);
  });

  it('says what changed when the lock was lost while editing and someone saved: the version now, who saved it, its diff, a write over it', async () => {
    const base = (await byName(owner, 'edit.md')).version;
    const held = heldEditor(guest, 'lost-lock', { text: 'mine, late', write: 'last' });
    const { done } = await editing(guest, 'edit.md', held.ed, held.opened);
    // The owner forces Gus's lock open and saves a version of their own meanwhile.
    expect((await owner.run(['artifact', 'unlock', 'edit.md'])).code).toBe(0);
    const theirs = join(owner.home, 'saved-meanwhile.md');
    writeFileSync(theirs, 'the owner saved this\n');
    expect((await owner.run(['artifact', 'write', 'edit.md', '--file', theirs])).code).toBe(0);
    held.release();
    const result = await done;
    expect(result.code).toBe(6);
    const kept = result.stderr.match(/Your text is kept in (\S+)/)![1]!;
    expect(readFileSync(kept, 'utf8')).toContain('mine, late');
    expect(result.stderr).toContain(
      'Your lock on it was lost while the editor was open (the owner released it, or it lapsed).',
    );
    expect(result.stderr).toContain(
      `It was edited from version ${base}, and the document is at version ${base + 1}, saved by Owner`,
    );
    // Not the write on the version it was edited from, which is stale already.
    expect(result.stderr).not.toContain('Save it later');
    expect(result.stderr).not.toContain(`--base-version ${base}\n`);
    const [diff] = suggested(result.stderr);
    expect(diff).toEqual(['artifact', 'diff', 'edit.md', String(base), String(base + 1)]);
    const write = writeSuggested(result.stderr);
    expect((await guest.run(diff!)).stdout).toContain('+the owner saved this');
    expect(write).toEqual([
      'artifact',
      'write',
      'edit.md',
      '--file',
      kept,
      '--base-version',
      String(base + 1),
    ]);
    // Run as printed, it saves the kept text over their version, knowingly.
    const saved = await guest.run(write!);
    expect(saved.code).toBe(0);
    expect((await owner.run(['artifact', 'download', 'edit.md'])).stdout).toContain('mine, late');
  });

  it('tells the owner whose lock was lost while editing that it lapsed or their key released it, not that the owner did', async () => {
    const held = heldEditor(owner, 'owner-lost-lock', { text: 'owner draft', write: 'last' });
    const { done } = await editing(owner, 'edit.md', held.ed, held.opened);
    // The owner's own key releases it elsewhere (another terminal), and a guest saves meanwhile.
    expect((await owner.run(['artifact', 'unlock', 'edit.md'])).code).toBe(0);
    const theirs = join(guest.home, 'guest-meanwhile.md');
    writeFileSync(theirs, 'the guest saved this\n');
    expect((await guest.run(['artifact', 'write', 'edit.md', '--file', theirs])).code).toBe(0);
    held.release();
    const result = await done;
    expect(result.code).toBe(6);
    expect(result.stderr).toContain(
      'Your lock on it was lost while the editor was open (it lapsed, or your key released it elsewhere).',
    );
    expect(result.stderr).not.toContain('the owner released it');
  });

  it('says, when the lock was lost but nobody saved, that the version edited is still the latest, and who holds the lock', async () => {
    const base = (await byName(owner, 'edit.md')).version;
    const result = await editWhileOwnerTakesLock('lost-nothing-saved', { text: 'mine again', write: 'last' });
    expect(result.stderr).toContain('Your lock on it was lost while the editor was open');
    expect(result.stderr).toContain(
      `Nobody saved since version ${base}, which you edited; Owner holds its lock now`,
    );
    const kept = result.stderr.match(/Your text is kept in (\S+)/)![1]!;
    const write = writeSuggested(result.stderr);
    expect(write).toEqual([
      'artifact',
      'write',
      'edit.md',
      '--file',
      kept,
      '--base-version',
      String(base),
      '--wait',
      '5m',
    ]);
    expect((await owner.run(['artifact', 'unlock', 'edit.md'])).code).toBe(0);
  });

  it('suggests saving kept text over the version it was edited from: refused once someone saved since', async () => {
    /** A failed edit's suggested save command, as arguments of convene. */
    const failedEdit = async (text: string) => {
      const ed = editor(guest, 'offline', `printf "${text}\\n" >> "$1"\nexit 3`);
      const failed = await guest.run(['artifact', 'edit', 'edit.md'], { env: { EDITOR: ed } });
      expect(failed.code).toBe(1);
      const command = failed.stderr.match(/Save it later with: convene (.+)$/m)?.[1];
      expect(command).toBeDefined();
      return [...command!.matchAll(/"((?:[^"\\]|\\.)*)"|(\S+)/g)].map(([, quoted, bare]) =>
        quoted === undefined ? bare! : (JSON.parse(`"${quoted}"`) as string),
      );
    };
    const before = (await byName(owner, 'edit.md')).version;
    const stale = await failedEdit('written offline');
    expect(stale).toContain('--base-version');
    expect(stale[stale.indexOf('--base-version') + 1]).toBe(String(before));
    // Someone saves meanwhile: the suggested command must not overwrite their version.
    const theirs = join(owner.home, 'theirs.md');
    writeFileSync(theirs, 'their version\n');
    expect((await owner.run(['artifact', 'write', 'edit.md', '--file', theirs])).code).toBe(0);
    const refused = await guest.run(stale);
    expect(refused.code).toBe(6);
    expect((await owner.run(['artifact', 'download', 'edit.md'])).stdout).toBe('their version\n');
    // Nobody saved since this one: it saves.
    const fresh = await failedEdit('written offline again');
    const saved = await guest.run(fresh);
    expect(saved.code).toBe(0);
    expect((await byName(owner, 'edit.md')).version).toBe(before + 2);
    expect((await owner.run(['artifact', 'download', 'edit.md'])).stdout).toBe(
      'their version\nwritten offline again\n',
    );
  });
});

describe('artifact edit whose save is refused: someone saved since the version it opened', () => {
  it('suggests the diff from that version to the current one, and a write that can succeed', async () => {
    await guest.run(['artifact', 'create', 'race.md'], { input: 'one\n', stdin: 'pipe' });
    // A lock held before the edit: another terminal of the same participant may write under it.
    expect((await guest.run(['artifact', 'lock', 'race.md'])).code).toBe(0);
    const { ed, opened, release } = heldEditor(guest, 'racing', { text: 'mine', write: 'last' });
    const { done } = await editing(guest, 'race.md', ed, opened);
    const elsewhere = await guest.run(['artifact', 'write', 'race.md'], {
      input: 'one\ntheirs\n',
      stdin: 'pipe',
    });
    expect(elsewhere.code).toBe(0);
    release();
    const refused = await done;
    expect(refused.code).toBe(6);
    const kept = refused.stderr.match(/Your text is kept in (\S+)/)![1]!;
    // Not the diff of the last save alone, nor a write on version 1, which is certain to be refused.
    expect(refused.stderr).toContain('It was edited from version 1, and the document is at version 2');
    const [diff] = suggested(refused.stderr);
    expect(diff).toEqual(['artifact', 'diff', 'race.md', '1', '2']);
    expect((await guest.run(diff!)).stdout).toContain('+theirs');
    const save = refused.stderr.match(/save it with: convene (.+)$/m)![1]!;
    expect(save).toBe(`artifact write "race.md" --file "${kept}" --base-version 2`);
    const saved = await guest.run(['artifact', 'write', 'race.md', '--file', kept, '--base-version', '2']);
    expect(saved.code).toBe(0);
    expect((await guest.run(['artifact', 'download', 'race.md'])).stdout).toBe('one\nmine\n');
    expect((await guest.run(['artifact', 'unlock', 'race.md'])).code).toBe(0);
  });
});

describe('hints of a space other than the default', () => {
  it('name the space, so that copied they act on it and not on the default space', async () => {
    const bob = new User(server.url);
    const ann = new User(server.url);
    try {
      expect((await bob.run(['space', 'create', 'Secret'])).code).toBe(0);
      await joinAs(bob, ann, 'Ann');
      expect((await bob.run(['artifact', 'create', 'notes.md'])).code).toBe(0);
      expect((await bob.run(['space', 'create', 'Daily Standup'])).code).toBe(0);
      // What runs a hint as a person copies it: its first suggested command line, as bob.
      const run = (text: string, which = 0) => bob.run(suggested(text)[which]!);

      const locked = await bob.run(['artifact', 'lock', 'notes.md', '--space', 'Secret']);
      expect(locked.stderr).toContain('release with `convene artifact unlock "notes.md" --space "Secret"`');
      expect((await run(locked.stderr, 1)).code).toBe(0);

      const file = join(bob.home, 'notes.md');
      writeFileSync(file, 'second');
      expect(
        (await bob.run(['artifact', 'write', 'notes.md', '--file', file, '--space', 'Secret'])).code,
      ).toBe(0);
      const stale = await bob.run([
        'artifact',
        'write',
        'notes.md',
        '--file',
        file,
        '--base-version',
        '1',
        '--space',
        'Secret',
      ]);
      expect(stale.code).toBe(6);
      expect(stale.stderr).toContain('`convene artifact diff "notes.md" 1 2 --space "Secret"`');
      expect((await run(stale.stderr)).code).toBe(0);

      // Someone else's lock, met by edit: its unlock (the owner's to force) is in that space too.
      expect((await ann.run(['artifact', 'lock', 'notes.md'])).code).toBe(0);
      const edit = await bob.run(['artifact', 'edit', 'notes.md', '--space', 'Secret'], {
        env: { EDITOR: 'true' },
      });
      expect(edit.code).toBe(6);
      expect(edit.stderr).toContain('`convene tail "Secret"` shows the unlock');
      expect(edit.stderr).toContain('`convene artifact unlock "notes.md" --space "Secret"`');
      expect((await run(edit.stderr, 1)).code).toBe(0);

      const missing = await bob.run(['artifact', 'show', 'nope.md', '--space', 'Secret']);
      expect(missing.stderr).toContain('`convene artifact list --space "Secret"`');
      expect((await run(missing.stderr)).stdout).toContain('notes.md');

      // The default space, not named: its hints stay as short as they were.
      expect((await bob.run(['artifact', 'create', 'plan.md'])).stderr).toContain(
        'Edit it with `convene artifact edit "plan.md"`.',
      );
    } finally {
      bob.remove();
      ann.remove();
    }
  });
});

describe('a hint that names a document with shell characters or a direction mark in its name', () => {
  it('quotes it so that the command line pastes into a shell as it is, and works', async () => {
    // `convene` on the PATH of the shell the hint is pasted into.
    const bin = join(guest.home, 'bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'convene'), `#!/bin/sh\nexec "${process.execPath}" "${bundle}" "$@"\n`, {
      mode: 0o755,
    });
    const env = { ...process.env, ...guest.env, PATH: `${bin}:${process.env.PATH}` } as NodeJS.ProcessEnv;
    for (const name of LEAKY_ENV) if (!(name in guest.env)) delete env[name];
    // (A newline, a tab or an escape the server refuses in a name.)
    for (const name of ["it's $HOME `id`.md", 'and \u202eback.md', 'say "$(id)"; !x.md']) {
      expect((await guest.run(['artifact', 'create', name])).code).toBe(0);
      const locked = await guest.run(['artifact', 'lock', name]);
      expect(locked.code).toBe(0);
      const line = /`(convene artifact unlock [^`]+)`/.exec(locked.stderr)?.[1];
      // One line, nothing a terminal would act on.
      expect(line).toMatch(/^[\x20-\x7e]+$/);
      const pasted = await finished(spawn('bash', ['-c', line!], { env }));
      expect({ name, line, code: pasted.code, stderr: pasted.stderr }).toEqual({
        name,
        line,
        code: 0,
        stderr: expect.stringContaining('Unlocked'),
      });
    }
  });
});

describe('a hint that names a document whose name starts with "-"', () => {
  it('puts the name after --, and its options before it, so that the line pastes and works', async () => {
    const ana = new User(server.url);
    const ben = new User(server.url);
    try {
      expect((await ana.run(['space', 'create', 'Dashes'])).code).toBe(0);
      await joinAs(ana, ben, 'Ben');
      const created = await ana.run(['artifact', 'create', '--', '-draft.md'], {
        input: 'x\n',
        stdin: 'pipe',
      });
      expect(created.code).toBe(0);
      // Not `convene artifact edit "-draft.md"`: the shell drops the quotes, and "-draft.md" is an option.
      expect(created.stderr).toContain('Edit it with `convene artifact edit -- "-draft.md"`.');
      const edited = await ana.run(suggested(created.stderr)[0]!, { env: { EDITOR: 'true' } });
      expect({ code: edited.code, stderr: edited.stderr }).toEqual({
        code: 0,
        stderr: expect.stringContaining('No changes to -draft.md'),
      });

      // Options after -- are arguments too: said so, with the line that has them before it.
      writeFileSync(join(ana.home, 'plan.md'), '# Plan\n');
      const late = await ana.run(['artifact', 'create', '--', '-dash.md', '--file', 'plan.md']);
      expect(late.code).toBe(2);
      expect(late.stderr).toContain('Options go before --');
      const [moved] = suggested(late.stderr);
      expect(moved).toEqual(['artifact', 'create', '--file', 'plan.md', '--', '-dash.md']);
      expect((await ana.run(moved!)).code).toBe(0);
      expect((await ana.run(['artifact', 'download', '--', '-dash.md'])).stdout).toBe('# Plan\n');

      // lock's hints, and the unlock a participant who meets the lock is given, to ask the owner for.
      const locked = await ana.run(['artifact', 'lock', '--', '-draft.md']);
      expect(locked.code, locked.stderr).toBe(0);
      const [write, unlock] = suggested(locked.stderr);
      expect(write).toEqual(['artifact', 'write', '--file', 'F', '--base-version', '1', '--', '-draft.md']);
      expect(unlock).toEqual(['artifact', 'unlock', '--', '-draft.md']);
      const blocked = await ben.run(['artifact', 'write', '--', '-draft.md'], {
        input: 'y\n',
        stdin: 'pipe',
      });
      expect(blocked.code).toBe(6);
      expect(blocked.stderr).toMatch(/`convene artifact unlock --space [0-9a-f-]{36} -- "-draft\.md"`/);
      expect((await ana.run(unlock!)).code).toBe(0);

      // A version that is none: the history that lists them.
      const none = await ana.run(['artifact', 'show', '--at', '9', '--', '-draft.md']);
      expect(none.code).toBe(5);
      const [history] = suggested(none.stderr);
      expect(history).toEqual(['artifact', 'history', '--', '-draft.md']);
      expect((await ana.run(history!)).code).toBe(0);

      // Another space than the default: --space goes before -- with the other options.
      expect((await ana.run(['space', 'create', 'Elsewhere'])).code).toBe(0);
      const there = await ana.run(['artifact', 'lock', '--space', 'Dashes', '--', '-draft.md']);
      const release = suggested(there.stderr)[1]!;
      expect(release).toEqual(['artifact', 'unlock', '--space', 'Dashes', '--', '-draft.md']);
      // Pasted into a shell as it is.
      const bin = join(ana.home, 'bin');
      mkdirSync(bin, { recursive: true });
      writeFileSync(join(bin, 'convene'), `#!/bin/sh\nexec "${process.execPath}" "${bundle}" "$@"\n`, {
        mode: 0o755,
      });
      const env = { ...process.env, ...ana.env, PATH: `${bin}:${process.env.PATH}` } as NodeJS.ProcessEnv;
      for (const name of LEAKY_ENV) if (!(name in ana.env)) delete env[name];
      const line = /`(convene artifact unlock [^`]+)`/.exec(there.stderr)![1]!;
      const pasted = await finished(spawn('bash', ['-c', line], { env }));
      expect({ line, code: pasted.code, stderr: pasted.stderr }).toEqual({
        line,
        code: 0,
        stderr: expect.stringContaining('Unlocked -draft.md'),
      });
    } finally {
      ana.remove();
      ben.remove();
    }
  });
});

describe('documents whose names differ only in case, or not at all (the API takes them)', () => {
  it('take the name in the case typed, and hints name by id a document its name does not name alone', async () => {
    const ana = new User(server.url);
    const ben = new User(server.url);
    try {
      expect((await ana.run(['space', 'create', 'Cases'])).code).toBe(0);
      await joinAs(ana, ben, 'Ben');
      const host = ana.credentials().hosts[server.url];
      const { spaceId, key } = host.spaces[host.defaultSpace];
      // Straight through the API: `artifact create` refuses a name the space has, in any case.
      const create = async (name: string, content: string) => {
        const response = await fetch(`${server.url}/hub/space/${spaceId}/artifact`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-private-key': key },
          body: JSON.stringify({ name, type: 'markdown', content }),
        });
        expect(response.status).toBe(200);
        return (await response.json()) as { id: string; name: string };
      };
      const first = await create('twin.md', 'first twin\n');
      const second = await create('twin.md', 'second twin\n');
      await create('notes.md', 'lower\n');
      await create('Notes.md', 'upper\n');

      // The name as typed names one; only a case that matches neither exactly is ambiguous.
      const lower = await ana.run(['artifact', 'unlock', 'notes.md', '--json']);
      expect({ code: lower.code, name: lower.json().name }).toEqual({ code: 0, name: 'notes.md' });
      expect((await ana.run(['artifact', 'download', 'Notes.md'])).stdout).toBe('upper\n');
      const neither = await ana.run(['artifact', 'show', 'NOTES.md']);
      expect(neither.code).toBe(2);
      expect(neither.stderr).toContain('2 documents are called "NOTES.md"');

      // A lock's hint names the document by its id, which names it alone (and the space by its id:
      // the owner runs it on their side).
      expect((await ana.run(['artifact', 'lock', first.id])).code).toBe(0);
      const blocked = await ben.run(['artifact', 'write', first.id], { input: 'mine\n', stdin: 'pipe' });
      expect(blocked.code).toBe(6);
      const unlock = suggested(blocked.stderr).find((words) => words[1] === 'unlock');
      expect(unlock).toEqual(['artifact', 'unlock', first.id, '--space', spaceId]);
      expect((await ana.run(unlock!)).code).toBe(0);
      expect((await ana.run(['artifact', 'show', first.id, '--json'])).json().lockedBy).toBeUndefined();

      // No editor: the copy to edit and the write back, of that document.
      const blind = await ben.run(['artifact', 'edit', second.id]);
      expect(blind.code).toBe(2);
      const [download, writeBack] = suggested(blind.stderr);
      expect(download).toEqual(['artifact', 'download', second.id, '-o', 'F']);
      expect(writeBack).toEqual(['artifact', 'write', second.id, '--file', 'F', '--base-version', '1']);
      expect((await ben.run(download!)).code).toBe(0);
      expect(readFileSync(join(ben.home, 'F'), 'utf8')).toBe('second twin\n');

      // space close, asked nothing (--yes): nothing to save any more, so what was lost, after it.
      const closing = await ana.run(['space', 'close', '--yes']);
      expect(closing.code).toBe(0);
      expect(closing.stderr).not.toContain('Save them first');
      expect(closing.stderr, closing.stderr).toContain(
        'documents and messages can no longer be read by anyone.',
      );
    } finally {
      ana.remove();
      ben.remove();
    }
  });
});

describe('the owner releasing someone else’s lock on a terminal', () => {
  it('asks first (default no); --yes does not; releasing your own lock is not asked', async () => {
    expect((await guest.run(['artifact', 'create', 'held.md'])).code).toBe(0);
    expect((await guest.run(['artifact', 'lock', 'held.md'])).code).toBe(0);
    const question = 'Release Gus’s lock on held.md?';
    const unlock = (who: User, args: string[], key?: string) =>
      answered(who, ['artifact', 'unlock', ...args], key === undefined ? undefined : question, key);
    const declined = await unlock(owner, ['held.md'], 'Enter');
    expect(declined).toContain('EXIT=1');
    expect((await byName(owner, 'held.md')).lockedBy).toBeDefined();
    const forced = await unlock(owner, ['held.md', '-y']);
    expect(forced).toContain('EXIT=0');
    expect(forced).toContain('Released Gus’s lock on held.md');
    expect((await byName(owner, 'held.md')).lockedBy).toBeUndefined();
    // One's own lock: nothing to ask.
    expect((await owner.run(['artifact', 'lock', 'held.md'])).code).toBe(0);
    expect(await unlock(owner, ['held.md'])).toContain('EXIT=0');
  });
});

describe('artifact show and download --at', () => {
  it('reads an earlier version with --at N (show and download); a version that is none is exit 5', async () => {
    const first = join(owner.home, 'at-v1.md');
    writeFileSync(first, 'first\n');
    expect((await owner.run(['artifact', 'create', 'at.md', '--file', first])).code).toBe(0);
    const second = join(owner.home, 'at-v2.md');
    writeFileSync(second, 'second\n');
    expect((await owner.run(['artifact', 'write', 'at.md', '--file', second])).code).toBe(0);
    const shown = await owner.run(['artifact', 'show', 'at.md', '--at', '1']);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/version\s+1 \(the latest is 2\)/);
    expect(shown.stdout).toContain('first');
    expect(shown.stdout).not.toContain('second');
    expect((await owner.run(['artifact', 'show', 'at.md', '--at', '1', '--json'])).json()).toMatchObject({
      version: 1,
      content: 'first\n',
    });
    expect((await owner.run(['artifact', 'download', 'at.md', '--at', '1'])).stdout).toBe('first\n');
    const file = join(owner.home, 'at-old.md');
    const old = await owner.run(['artifact', 'download', 'at.md', '--at', '1', '-o', file]);
    expect(old.code).toBe(0);
    // Which version was saved is said, not only the document's name.
    expect(old.stderr).toContain(`✓ Saved at.md version 1 to ${file}`);
    expect(readFileSync(file, 'utf8')).toBe('first\n');
    const latest = join(owner.home, 'at-new.md');
    expect((await owner.run(['artifact', 'download', 'at.md', '-o', latest])).stderr).toContain(
      `✓ Saved at.md version 2 to ${latest}`,
    );
    expect(
      (await owner.run(['artifact', 'download', 'at.md', '--at', '1', '-o', file, '--json'])).json(),
    ).toMatchObject({ version: 1, file });
    expect((await owner.run(['artifact', 'download', 'at.md'])).stdout).toBe('second\n');
    for (const verb of ['show', 'download']) {
      const none = await owner.run(['artifact', verb, 'at.md', '--at', '9']);
      expect({ verb, code: none.code }).toEqual({ verb, code: 5 });
      expect(none.stderr).toContain('artifact history');
      // A document, as everywhere else here, by its name: not the API's "this artifact".
      expect(none.stderr).toContain('version 9 of "at.md" not found');
      expect(none.stderr).not.toContain('artifact not found');
      const bad = await owner.run(['artifact', verb, 'at.md', '--at', 'one']);
      expect({ verb, code: bad.code }).toEqual({ verb, code: 2 });
      expect(bad.stderr).toContain('--at must be a version number');
    }
  });
});
