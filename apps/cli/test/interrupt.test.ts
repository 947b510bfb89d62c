import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, follow, User } from './helpers/cli';
import { bundle } from './helpers/paths';
import { startServer, type TestServer } from './helpers/server';
import { Terminal } from './helpers/tmux';

let server: TestServer;
let host: User;
let humanLink: string;
const users: User[] = [];
const user = () => {
  const made = new User(server.url);
  users.push(made);
  return made;
};

beforeAll(async () => {
  server = await startServer();
  host = user();
  expect((await host.run(['space', 'create', 'Guarded', '--private'])).code).toBe(0);
  humanLink = (await host.run(['invite', '--json'])).json().humanLink;
});
afterAll(async () => {
  await server?.close();
  for (const made of users) made.remove();
});

/** Ctrl-C on a terminal: the key, through tmux, to the command waiting there. */
async function ctrlCOnTerminal(who: User, args: string[], waiting: string): Promise<string> {
  const terminal = new Terminal([process.execPath, bundle, ...args], who.env, who.home);
  try {
    await eventually(() => expect(terminal.screen()).toContain(waiting));
    terminal.press('C-c');
    await eventually(() => expect(terminal.screen()).toMatch(/EXIT=\d+/));
    return terminal.screen();
  } finally {
    terminal.close();
  }
}

/** SIGINT without a terminal, as a script's Ctrl-C or `timeout -s INT` sends it. */
async function sigintWithoutTerminal(who: User, args: string[], waiting: string) {
  const waits = follow(who, args);
  await waits.waitFor(waiting, { in: 'stderr' });
  return waits.interrupt();
}

describe('Ctrl-C while a wait goes on ends with 130 and what to do next', () => {
  it('join waiting for approval, on a terminal; the same join resumes the request', async () => {
    const visitor = user();
    const screen = await ctrlCOnTerminal(
      visitor,
      ['join', humanLink, '--name', 'Tess'],
      'Waiting for the owner to approve you',
    );
    expect(screen).toContain('EXIT=130');
    expect(screen).not.toContain('Canceled');
    expect(screen).toContain('stopped waiting for approval');
    expect(screen).toContain('run the same `convene join` again to keep waiting');
    // The request is still there: approved, the same join goes straight through.
    expect((await host.run(['approve', 'Tess'])).code).toBe(0);
    const again = await visitor.run(['join', humanLink, '--name', 'Tess']);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('Joined Guarded as Tess');
  });

  it('a prompt for a missing argument, on a terminal: nothing is done', async () => {
    const someone = user();
    const screen = await ctrlCOnTerminal(someone, ['space', 'create'], 'Name of the space');
    expect(screen).toContain('EXIT=130');
    expect(screen).toContain('Nothing was changed.');
    expect((await someone.run(['space', 'list', '--json'])).json()).toEqual([]);
  });

  it('join waiting for approval, without a terminal', async () => {
    const result = await sigintWithoutTerminal(
      user(),
      ['join', humanLink, '--name', 'Walt'],
      'Waiting for the owner to approve you',
    );
    expect(result.code).toBe(130);
    expect(result.stderr).toContain('run the same `convene join` again to keep waiting');
  });

  it('login waiting for the browser, on a terminal', async () => {
    const screen = await ctrlCOnTerminal(user(), ['login'], 'Waiting for you to approve in the browser');
    expect(screen).toContain('EXIT=130');
    expect(screen).not.toContain('Canceled');
    expect(screen).toContain('stopped waiting for the browser');
    expect(screen).toContain('run `convene login` again');
  });

  it('login waiting for the browser, without a terminal', async () => {
    const result = await sigintWithoutTerminal(
      user(),
      ['login'],
      'Waiting for you to approve in the browser',
    );
    expect(result.code).toBe(130);
    expect(result.stderr).toContain('stopped waiting for the browser');
    expect(result.stderr).toContain('run `convene login` again');
  });
});
