import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { type AddressInfo, createServer as createNetServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandPath, createApp } from '../src/app';
import { buildProgram, walk } from '../src/program';
import { eventually, suggested, User } from './helpers/cli';
import { bundle, cliRoot } from './helpers/paths';
import { startServer, type TestServer } from './helpers/server';
import { Terminal } from './helpers/tmux';

/** Whether a shell is installed here (zsh and fish are not everywhere the tests run). */
const hasShell = (name: string) => {
  try {
    execFileSync(name, ['-c', 'exit 0'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

let server: TestServer;
let owner: User;

beforeAll(async () => {
  server = await startServer();
  owner = new User(server.url);
  await owner.run(['space', 'create', 'Tools']);
});
afterAll(async () => {
  await server?.close();
  owner?.remove();
});

describe('help, version, usage errors', () => {
  it('has help with examples everywhere, exit 0', async () => {
    const root = await owner.run(['--help']);
    expect(root.code).toBe(0);
    for (const name of [
      'space',
      'invite',
      'join',
      'send',
      'tail',
      'artifact',
      'login',
      'serve',
      'mcp',
      'completion',
      'doctor',
    ]) {
      expect(root.stdout).toMatch(new RegExp(`^  ${name}\\b`, 'm'));
    }
    expect(root.stdout).toContain(
      'Exit codes: 0 ok, 1 error, 2 usage, 4 authentication needed, 5 not found, 6 locked',
    );
    for (const args of [
      ['artifact', 'edit', '--help'],
      ['help', 'send'],
      ['space', 'create', '-h'],
      ['mcp', 'config', '--help'],
    ]) {
      const help = await owner.run(args);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain('Examples:');
      expect(help.stdout).toContain('--json');
    }
    // Defaults read as values, not as JSON: no quoted numbers, no empty list.
    for (const [args, shown] of [
      [['messages', '--help'], '(default: 100; with --since, no limit)'],
      [['tail', '--help'], '(default: 10)'],
    ] as const) {
      const help = (await owner.run([...args])).stdout.replace(/\s+/g, ' ');
      expect(help).toContain(shown);
    }
    expect((await owner.run(['send', '--help'])).stdout).not.toContain('(default: [])');
    // `convene` alone answers with the general help, as --help does: on stdout (`convene | less`).
    const alone = await owner.run([]);
    expect(alone.code).toBe(0);
    expect(alone.stdout).toBe((await owner.run(['--help'])).stdout);
    expect(alone.stderr).toBe('');
    // A group named without one of its commands is a usage error: its help, on stderr, exit 2.
    for (const group of ['space', 'mcp', 'token', 'artifact', 'webhook']) {
      const bare = await owner.run([group]);
      expect({ group, code: bare.code }).toEqual({ group, code: 2 });
      expect(bare.stderr).toMatch(new RegExp(`^Usage: convene ${group}\\b.* <command>`));
      expect(bare.stdout).toBe('');
      // Asked for, the same help is no failure.
      expect((await owner.run([group, '--help'])).code).toBe(0);
      expect((await owner.run(['help', group])).code).toBe(0);
      // With --json, stderr has one JSON line naming the group's commands, and no help text.
      const json = await owner.run([group, '--json']);
      expect({ group, code: json.code }).toEqual({ group, code: 2 });
      expect(json.stderr.trim().split('\n')).toHaveLength(1);
      expect(JSON.parse(json.stderr)).toMatchObject({
        error: expect.stringMatching(new RegExp(`^convene ${group} needs a command: \\w`)),
        hint: `Run \`convene ${group} --help\` for usage.`,
        exitCode: 2,
      });
    }
    expect(JSON.parse((await owner.run(['token', '--json'])).stderr).error).toBe(
      'convene token needs a command: create, list or revoke',
    );
    expect((await owner.run(['--version'])).stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('answers `convene version` as `convene --version`, and lists it in the help and in completion', async () => {
    const flag = await owner.run(['--version']);
    const command = await owner.run(['version']);
    expect(command.code).toBe(0);
    expect(command.stdout).toBe(flag.stdout);
    expect(command.stderr).toBe('');
    const json = await owner.run(['version', '--json']);
    expect(json.json()).toEqual({ version: flag.stdout.trim() });
    // With --json, either form prints that JSON.
    for (const args of [
      ['--version', '--json'],
      ['--json', '-v'],
    ]) {
      expect({ args, stdout: (await owner.run(args)).stdout }).toEqual({ args, stdout: json.stdout });
    }
    expect((await owner.run(['--help'])).stdout).toMatch(/^ {2}version\b/m);
    expect((await owner.run(['help', 'version'])).code).toBe(0);
    // A typo of it is answered as any command's.
    expect((await owner.run(['versoin'])).stderr).toContain('Did you mean version?');
  });

  it('groups the commands by what they act on', async () => {
    const root = (await owner.run(['--help'])).stdout;
    /** The commands listed under a heading of the root help (first word of each entry). */
    const group = (heading: string) =>
      (root.split(`\n${heading}\n`)[1] ?? '')
        .split('\n\n')[0]!
        .split('\n')
        .flatMap((line) => line.match(/^ {2}(\w+)/)?.[1] ?? []);
    // A webhook belongs to one space, like the inbox beside it; the account is yours on the server.
    expect(group('Spaces and messages:')).toEqual(expect.arrayContaining(['inbox', 'webhook', 'tail']));
    expect(group('Account:')).toEqual(['login', 'signup', 'logout', 'whoami', 'token']);
  });

  it('describes every command in its help, under its usage line, and gives examples', async () => {
    const commands = walk(buildProgram(createApp(new AbortController().signal)))
      .slice(1)
      .map((command) => commandPath(command).split(' ').slice(1));
    expect(commands).toContainEqual(['webhook', 'add']);
    // A few at a time: one process per command.
    for (let i = 0; i < commands.length; i += 6) {
      await Promise.all(
        commands.slice(i, i + 6).map(async (path) => {
          const help = await owner.run([...path, '--help']);
          expect({ path, code: help.code }).toEqual({ path, code: 0 });
          // Usage, a blank line, then what the command does in a sentence (not straight into its
          // arguments, nor the lower-case one-line summary of the command list).
          expect({ path, describes: /^Usage: .+\n\n(?!Arguments:|Options:)[A-Z]/.test(help.stdout) }).toEqual(
            {
              path,
              describes: true,
            },
          );
          expect({ path, examples: help.stdout.includes('\nExamples:\n') }).toEqual({ path, examples: true });
        }),
      );
    }
  });

  it('writes every usage line one way: arguments in capitals, [options] after them', () => {
    const program = buildProgram(createApp(new AbortController().signal));
    const usages = walk(program)
      .slice(1)
      // Not the groups (`<command>`), nor the hidden one the completion scripts call.
      .filter((command) => command.commands.length === 0 && !command.name().startsWith('__'))
      .map((command) => ({ path: commandPath(command), usage: command.usage() }));
    for (const { path, usage } of usages) {
      // Not commander's own `[options] [space]` or `<url>`.
      expect({ path, lowerCase: /<[a-z]|\[(?!options\])[a-z][a-z-]*(\.\.\.)?\]/.test(usage) }).toEqual({
        path,
        lowerCase: false,
      });
      expect({ path, optionsFirst: /\[options\] \S/.test(usage) }).toEqual({ path, optionsFirst: false });
    }
    const usage = (path: string) => usages.find((u) => u.path === path)!.usage;
    expect(usage('convene space show')).toBe('[SPACE] [options]');
    expect(usage('convene webhook add')).toBe('URL [options]');
    // send's usage names what the README's does.
    expect(usage('convene send')).toContain('[--mention WHO]... [--reply-to ID]');
    const readme = readFileSync(join(cliRoot, 'README.md'), 'utf8');
    expect(readme).toContain(`convene send ${usage('convene send')}\n`);
  });

  it('leaves the global --url out of serve’s help: serve is the server, placed by --port and --host', async () => {
    const serve = await owner.run(['serve', '--help']);
    expect(serve.code).toBe(0);
    expect(serve.stdout).toMatch(/^ {2}-p, --port <port>/m);
    expect(serve.stdout).toMatch(/^ {2}--host <host>/m);
    expect(serve.stdout).toMatch(/^Global Options:\n(.+\n)* {2}--no-color\b/m);
    expect(serve.stdout).not.toContain('--url');
    expect((await owner.run(['help', 'serve'])).stdout).not.toContain('--url');
    // Nor --version, which only the program takes (`serve -v` is refused), as no command's help lists it.
    expect(serve.stdout).not.toContain('--version');
    expect((await owner.run(['send', '--help'])).stdout).not.toContain('--version');
    // Every other command still lists it.
    expect((await owner.run(['space', 'list', '--help'])).stdout).toMatch(/^ {2}--url <url>/m);
    // Given anyway, it is refused before any server starts (usage, exit 2), wherever it is written.
    const dataDir = join(owner.home, 'serve-data');
    for (const args of [
      ['serve', '--url', 'http://127.0.0.1:9', '--port', '0', '--data-dir', dataDir],
      ['--url', 'http://127.0.0.1:9', 'serve', '--port', '0', '--data-dir', dataDir],
    ]) {
      const refused = await owner.run(args, { timeoutMs: 15_000 });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('serve takes no --url');
      expect(refused.stderr).toContain('--port');
    }
  });

  it('answers unknown commands and options with exit 2, a suggestion and where to look', async () => {
    const typo = await owner.run(['sned', 'hi']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("unknown command 'sned'");
    expect(typo.stderr).toContain('send');
    // Words of other tools get the command they mean, as a typo does.
    const meant = {
      watch: 'Did you mean tail? `convene tail` follows a space live.',
      follow: 'Did you mean tail?',
      stream: 'Did you mean tail?',
      history:
        '`convene messages` lists a space’s messages; `convene artifact history ARTIFACT` a document’s versions.',
      chat: 'Did you mean send? `convene send TEXT` sends a message.',
      say: 'Did you mean send?',
    };
    await Promise.all(
      Object.entries(meant).map(async ([word, said]) => {
        const synonym = await owner.run([word]);
        expect({ word, code: synonym.code }).toEqual({ word, code: 2 });
        expect(synonym.stderr).toContain(`unknown command '${word}'`);
        expect(synonym.stderr).toContain(said);
      }),
    );
    expect(JSON.parse((await owner.run(['--json', 'watch'])).stderr)).toEqual({
      error: "unknown command 'watch'",
      hint: 'Did you mean tail? `convene tail` follows a space live. Run `convene --help` for usage.',
      exitCode: 2,
    });
    expect((await owner.run(['help', 'say'])).stderr).toContain('Did you mean send?');
    // Under a command too, by its alias as by its name.
    const under = {
      'space delete': 'Did you mean close? `convene space close SPACE`',
      'space switch': 'Did you mean use? `convene space use SPACE`',
      'doc cat': 'Did you mean show? `convene artifact show ARTIFACT`',
      'artifact export': 'Did you mean download? `convene artifact download ARTIFACT`',
      'artifact rename': 'Documents keep the name they were created with',
      ban: 'Did you mean kick?',
      members: 'Did you mean participants?',
      'webhook delete': 'Did you mean remove?',
      'token delete': 'Did you mean revoke?',
    };
    for (const [words, said] of Object.entries(under)) {
      const synonym = await owner.run([...words.split(' '), 'x']);
      expect({ words, code: synonym.code, said: synonym.stderr.includes(said) }).toEqual({
        words,
        code: 2,
        said: true,
      });
    }
    const option = await owner.run(['space', 'list', '--colour']);
    expect(option.code).toBe(2);
    expect(option.stderr).toContain('convene space list --help');
    const choice = await owner.run(['completion', 'powershell']);
    expect(choice.code).toBe(2);
    // Commander's own words, said as ours: what was given, and what may be.
    expect(choice.stderr).toMatch(/^✗ unknown shell 'powershell': bash, zsh or fish\n/);
    expect((await owner.run(['serve', '--log-format', 'xml'])).stderr).toMatch(
      /^✗ unknown --log-format 'xml': json or text\n/,
    );
    const many = await owner.run(['artifact', 'diff', 'x', '1', '2', '3']);
    expect(many.code).toBe(2);
    expect(many.stderr).toMatch(
      /^✗ too many arguments: convene artifact diff takes at most 3 \(ARTIFACT FROM TO\), not 4\n/,
    );
    // Every argument required; none at all.
    expect((await owner.run(['webhook', 'add', 'u', 'v'])).stderr).toMatch(
      /^✗ too many arguments: convene webhook add takes 1 \(URL\), not 2\n/,
    );
    const none = await owner.run(['whoami', 'x']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^✗ too many arguments: convene whoami takes none, not 1\n/);
    // A missing argument that has choices lists them.
    const noShell = await owner.run(['completion']);
    expect(noShell.code).toBe(2);
    expect(noShell.stderr).toContain("missing required argument 'shell': bash, zsh or fish");
    // With --json, a usage error is one JSON object on stderr, like any other error.
    const json = await owner.run(['--json', 'space', 'craete', 'X']);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stderr)).toEqual({
      error: "unknown command 'craete'",
      hint: 'Did you mean create? Run `convene space --help` for usage.',
      exitCode: 2,
    });
    expect(json.stdout).toBe('');
    // The start of a command is the command it starts (hist is history, not list, one letter away).
    const started = await owner.run(['artifact', 'hist', 'plan.md']);
    expect(started.code).toBe(2);
    expect(started.stderr).toContain('Did you mean history?');
    expect((await owner.run(['art', 'list'])).stderr).toContain('Did you mean artifact?');
    // Help for a command that does not exist says so (not the general help), with a suggestion.
    const unknownHelp = await owner.run(['help', 'nosuch']);
    expect(unknownHelp.code).toBe(2);
    expect(unknownHelp.stderr).toContain("unknown command 'nosuch'");
    expect(unknownHelp.stderr).not.toContain('Usage:');
    expect(unknownHelp.stdout).toBe('');
    expect((await owner.run(['help', 'sned'])).stderr).toContain('Did you mean send?');
    const nestedTypo = await owner.run(['--json', 'help', 'space', 'craete']);
    expect(nestedTypo.code).toBe(2);
    expect(JSON.parse(nestedTypo.stderr)).toEqual({
      error: "unknown command 'craete'",
      hint: 'Did you mean create? Run `convene space --help` for usage.',
      exitCode: 2,
    });
    // Every word counts: `help space create` is create's help, as `space create --help` is.
    const nested = await owner.run(['help', 'space', 'create']);
    expect(nested.code).toBe(0);
    expect(nested.stdout).toBe((await owner.run(['space', 'create', '--help'])).stdout);
    expect((await owner.run(['help', 'people'])).stdout).toContain('Usage: convene participants');
    // A group's own help command says so too, rather than showing the group's help as if all were well.
    for (const group of ['space', 'artifact', 'token']) {
      const unknown = await owner.run([group, 'help', 'nosuch']);
      expect({ group, code: unknown.code }).toEqual({ group, code: 2 });
      expect(unknown.stderr).toContain("unknown command 'nosuch'");
      expect(unknown.stderr).toContain(`Run \`convene ${group} --help\` for usage.`);
      expect(unknown.stderr).not.toContain('Usage:');
      expect(unknown.stdout).toBe('');
    }
    expect((await owner.run(['space', 'help', 'craete'])).stderr).toContain('Did you mean create?');
    const groupHelp = await owner.run(['space', 'help', 'create']);
    expect(groupHelp.code).toBe(0);
    expect(groupHelp.stdout).toBe(nested.stdout);
    expect((await owner.run(['space', 'help'])).stdout).toBe((await owner.run(['space', '--help'])).stdout);
  });

  it('takes -v/--version before any command only: after one, an unknown option (exit 2) and nothing runs', async () => {
    for (const args of [['--version'], ['-v'], ['--url', server.url, '--version']]) {
      const result = await owner.run(args);
      expect({ args, code: result.code, out: result.stdout.trim() }).toEqual({
        args,
        code: 0,
        out: expect.stringMatching(/^\d+\.\d+\.\d+$/),
      });
    }
    const before = (await owner.run(['messages', '--json'])).json().length;
    for (const args of [
      ['send', 'hello', '--version'],
      ['messages', '--limit', '1', '--version'],
      ['artifact', 'show', 'plan.md', '--version', '1'],
      ['artifact', 'history', 'plan.md', '-v', '2'],
    ]) {
      const result = await owner.run(args);
      expect({ args, code: result.code, stdout: result.stdout }).toEqual({ args, code: 2, stdout: '' });
      expect(result.stderr).toMatch(/unknown option '(--version|-v)'/);
      expect(result.stderr).toContain('`convene --version`');
      if (!args.includes('artifact'))
        expect(result.stderr).toContain(
          'This command takes no --version; convene’s own version: `convene --version`.',
        );
    }
    expect((await owner.run(['messages', '--json'])).json().length).toBe(before);
    // Of a document, the hint names the commands that take its versions.
    const json = await owner.run(['--json', 'artifact', 'show', 'plan.md', '--version', '1']);
    expect(JSON.parse(json.stderr)).toMatchObject({ error: "unknown option '--version'", exitCode: 2 });
    expect(JSON.parse(json.stderr).hint).toContain('`artifact history NAME` lists them');
    // Only the program's help lists it; a command's global options do not.
    expect((await owner.run(['--help'])).stdout).toContain('-v, --version');
    expect((await owner.run(['send', '--help'])).stdout).not.toContain('--version');
    // After `--`, it is the text.
    expect((await owner.run(['send', '--', '--version'])).code).toBe(0);
  });

  it('prints plain text off a terminal, and colours only when forced; --quiet keeps the essential value', async () => {
    const plain = await owner.run(['space', 'list']);
    expect(plain.stdout).not.toContain('\u001b[');
    const forced = await owner.run(['space', 'list'], { env: { FORCE_COLOR: '1' } });
    expect(forced.stdout).toContain('\u001b[');
    const noColor = await owner.run(['space', 'list', '--no-color'], { env: { FORCE_COLOR: '1' } });
    expect(noColor.stdout).not.toContain('\u001b[');
    // With both NO_COLOR and FORCE_COLOR, Node warns once colours are asked of it: never before
    // --json's error, which is all stderr holds.
    const both = await owner.run(['artifact', 'show', 'no-such.md', '--json'], {
      env: { FORCE_COLOR: '1', NO_COLOR: '1' },
    });
    expect(both.code).toBe(5);
    expect(
      both.stderr
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).exitCode),
    ).toEqual([5]);
    const quiet = await owner.run(['send', 'quietly', '-q']);
    expect(quiet.stderr).toBe('');
    expect(quiet.stdout.trim()).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('ask', () => {
  it('searches the server’s documentation', async () => {
    const answer = await owner.run(['ask', 'how', 'do', 'I', 'lock', 'an', 'artifact', '--json']);
    expect(answer.code).toBe(0);
    const body = answer.json();
    expect(body.query).toBe('how do I lock an artifact');
    expect(body.results.length).toBeGreaterThan(0);
    expect(body.results.map((r: any) => r.url).join(' ')).toMatch(/lock/i);
    const text = await owner.run(['ask', 'lock artifact']);
    expect(text.stdout).toContain(server.url);
    expect((await owner.run(['ask'])).code).toBe(2);
  });
});

describe('mcp config', () => {
  it('prints the configuration of each client, with the space key only when asked', async () => {
    const claude = (await owner.run(['mcp', 'config'])).json();
    expect(claude).toEqual({ mcpServers: { convene: { type: 'http', url: `${server.url}/mcp` } } });
    const cursor = (await owner.run(['mcp', 'config', '--client', 'cursor'])).json();
    expect(cursor).toEqual({ mcpServers: { convene: { url: `${server.url}/mcp` } } });
    const withKey = await owner.run(['mcp', 'config', '--client', 'vscode', '--space', 'Tools']);
    // A key in a project file: said on stderr, where the redirection into the file does not go.
    expect(withKey.stderr).toContain(
      'this configuration holds your owner key of "Tools": keep the file out of version control',
    );
    const vscode = withKey.json();
    const [space] = Object.values(owner.credentials().hosts[server.url].spaces) as any[];
    expect(vscode).toEqual({
      servers: {
        convene: { type: 'http', url: `${server.url}/mcp`, headers: { 'X-Private-Key': space.key } },
      },
    });
    const withHint = await owner.run(['mcp', 'config']);
    expect(withHint.stderr).toContain(`claude mcp add --transport http convene ${server.url}/mcp`);
    expect(withHint.stderr).not.toContain('holds your');
    // With --space, the claude hint does not print the key (scrollback, CI logs): its command reads
    // it from the credential file as it runs.
    const claudeWithKey = await owner.run(['mcp', 'config', '--space', 'Tools']);
    expect(claudeWithKey.code).toBe(0);
    expect(claudeWithKey.json().mcpServers.convene.headers['X-Private-Key']).toBe(space.key);
    expect(claudeWithKey.stderr).not.toContain(space.key);
    const line = claudeWithKey.stderr.match(/^Or: (claude mcp add .*)$/m)![1]!;
    expect(line).toBe(
      `claude mcp add --transport http convene ${server.url}/mcp --header "X-Private-Key: $(convene space key ${space.spaceId})"`,
    );
    // Pasted into a shell where convene is installed, the header it passes is the key.
    const header = line.match(/--header (".*")$/)![1]!;
    const bin = join(owner.home, 'bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'convene'), `#!/bin/sh\nexec "${process.execPath}" "${bundle}" "$@"\n`);
    chmodSync(join(bin, 'convene'), 0o755);
    expect(
      execFileSync('sh', ['-c', `printf %s ${header}`], {
        encoding: 'utf8',
        env: { ...owner.env, PATH: `${bin}:${process.env.PATH}` },
      }),
    ).toBe(`X-Private-Key: ${space.key}`);
    expect((await owner.run(['mcp', 'config', '--client', 'emacs'])).code).toBe(2);

    // The configuration works: the MCP endpoint answers a tools/list with the key's header.
    const response = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...vscode.servers.convene.headers,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('send_message');
  });
});

describe('completion', () => {
  it('offers the shells on a terminal when none is named (yours first), then says where the script goes', async () => {
    const terminal = new Terminal(
      [process.execPath, bundle, 'completion'],
      { ...owner.env, SHELL: '/usr/bin/zsh' },
      owner.home,
    );
    try {
      await eventually(() => expect(terminal.screen()).toContain('Which shell?'));
      for (const shell of ['bash', 'zsh', 'fish']) expect(terminal.screen()).toContain(shell);
      // Enter takes the one selected first: $SHELL's.
      terminal.press('Enter');
      await eventually(() => expect(terminal.screen()).toMatch(/EXIT=\d+/));
      expect(terminal.screen()).toContain('EXIT=0');
      expect(terminal.screen()).toContain('compdef');
      expect(terminal.screen()).toContain('Add `source <(convene completion zsh)` to ~/.zshrc');
    } finally {
      terminal.close();
    }
  });

  beforeAll(async () => {
    // A second space, whose name holds a space; Tools stays the default.
    expect((await owner.run(['space', 'create', 'Release plan'])).code).toBe(0);
    expect((await owner.run(['space', 'use', 'Tools'])).code).toBe(0);
  });

  it('completes commands, subcommands and flags in bash', async () => {
    const script = (await owner.run(['completion', 'bash'])).stdout;
    const file = join(owner.home, 'convene.bash');
    writeFileSync(file, script);
    const complete = (words: string[]) =>
      execFileSync(
        'bash',
        [
          '-c',
          `source ${file}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _convene; printf '%s\\n' "\${COMPREPLY[@]}"`,
        ],
        { encoding: 'utf8' },
      )
        .trim()
        .split('\n');
    expect(complete(['convene', 'sp'])).toEqual(['space']);
    expect(complete(['convene', 'vers'])).toEqual(['version']);
    expect(complete(['convene', 'artifact', 'e'])).toEqual(['edit']);
    expect(complete(['convene', 'space', 'create', '--pr'])).toEqual(['--private']);
    expect(complete(['convene', '--json', 'tail', '--si'])).toEqual(['--since']);
    // serve takes no --url (it is the server); the other commands do.
    expect(complete(['convene', 'serve', '--u'])).toEqual(['']);
    expect(complete(['convene', 'send', '--u'])).toEqual(['--url']);
    // An argument's choices, not the flags (whose common "-" bash would type in).
    expect(complete(['convene', 'completion', ''])).toEqual(['bash', 'zsh', 'fish']);
    expect(complete(['convene', 'mcp', 'config', '--client', ''])).toEqual(['claude', 'cursor', 'vscode']);
    // An argument or a value with nothing to offer gets nothing; flags only for a word like one.
    expect(complete(['convene', 'artifact', 'edit', ''])).toEqual(['']);
    expect(complete(['convene', 'kick', ''])).toEqual(['']);
    expect(complete(['convene', 'tail', '--since', ''])).toEqual(['']);
    expect(complete(['convene', 'kick', '-'])).toContain('--space');
  });

  it('offers file names in bash only where a file goes', async () => {
    const script = join(owner.home, 'convene.bash');
    writeFileSync(script, (await owner.run(['completion', 'bash'])).stdout);
    const rc = join(owner.home, 'bashrc');
    writeFileSync(rc, `PS1='$ '\nconvene() { "${process.execPath}" "${bundle}" "$@"; }\nsource ${script}\n`);
    const dir = join(owner.home, 'work');
    mkdirSync(dir);
    writeFileSync(join(dir, 'notes.md'), '');
    // A real bash at a prompt: what Tab types in is what a person sees, file names included
    // (COMPREPLY alone does not show bash's own fallback to them).
    const terminal = new Terminal(['bash', '--noprofile', '--rcfile', rc, '-i'], owner.env, dir);
    try {
      const rows = () => terminal.screen().trimEnd().split('\n');
      // At a fresh prompt, so nothing is typed ahead of readline (the terminal would echo it raw).
      const prompt = () => eventually(() => expect(rows().at(-1)).toBe('$'));
      const tab = async (line: string, mark: string) => {
        await prompt();
        terminal.press(line, 'Tab', mark);
        await eventually(() => expect(terminal.screen()).toContain(mark));
        const typed = rows().findLast((row) => row.includes(mark))!;
        terminal.press('C-c');
        return typed;
      };
      // A server this machine holds no space for: nothing, not the directory's files.
      expect(await tab('convene --url http://127.0.0.1:9 tail ', '#1')).toMatch(/ tail #1$/);
      expect(await tab('convene completion ', '#2')).toMatch(/ completion #2$/);
      expect(await tab('convene artifact edit ', '#3')).toMatch(/ edit #3$/);
      expect(await tab('convene artifact create x.md --file ', '#4')).toMatch(/ --file notes\.md #4$/);
    } finally {
      terminal.close();
    }
  });

  it('completes the names of the spaces convene holds keys for, from the credential file alone', async () => {
    const script = (await owner.run(['completion', 'bash'])).stdout;
    const file = join(owner.home, 'convene.bash');
    writeFileSync(file, script);
    // `convene` as the script calls it: this build, with the owner's configuration.
    const complete = (words: string[], env: Record<string, string> = {}) =>
      execFileSync(
        'bash',
        [
          '-c',
          `convene() { "${process.execPath}" "${bundle}" "$@"; }; source ${file}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _convene; printf '%s\\n' "\${COMPREPLY[@]}"`,
        ],
        { encoding: 'utf8', env: { ...process.env, ...owner.env, ...env } },
      )
        .trim()
        .split('\n');
    expect(complete(['convene', 'tail', ''])).toEqual(['Release\\ plan', 'Tools']);
    expect(complete(['convene', 'tail', 'rel'])).toEqual(['Release\\ plan']);
    expect(complete(['convene', 'space', 'use', 'T'])).toEqual(['Tools']);
    expect(complete(['convene', 'artifact', 'list', '--space', ''])).toEqual(['Release\\ plan', 'Tools']);
    expect(complete(['convene', 'send', '--json', '-s', 'To'])).toEqual(['Tools']);
    // After the space, what follows is not a space; a flag still completes.
    expect(complete(['convene', 'tail', 'Tools', ''])).not.toContain('Tools');
    expect(complete(['convene', 'tail', '--lines', '5', '--si'])).toEqual(['--since']);
    // The spaces of the server named on the line, which this machine holds none for.
    expect(complete(['convene', '--url', 'http://127.0.0.1:9', 'tail', ''])).toEqual(['']);
    // No request is made: the same names when every fetch throws.
    const offline = join(owner.home, 'no-network.mjs');
    writeFileSync(offline, "globalThis.fetch = () => { throw new Error('no network in a completion'); };\n");
    expect(complete(['convene', 'tail', ''], { NODE_OPTIONS: `--import=${offline}` })).toEqual([
      'Release\\ plan',
      'Tools',
    ]);
  });

  it.skipIf(!hasShell('zsh'))('completes commands, flags and space names in zsh', async () => {
    const file = join(owner.home, 'convene.zsh');
    writeFileSync(file, (await owner.run(['completion', 'zsh'])).stdout);
    // The completion system's builtins, replaced by functions that print what they are given.
    const harness = [
      `convene() { "${process.execPath}" "${bundle}" "$@" }`,
      'compdef() {}',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a zsh expansion
      'compadd() { print -l -- "${(@P)${@[-1]}}" }',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a zsh expansion
      '_describe() { print -l -- "${(@P)${@[-1]}}" }',
      '_files() { print FILES }',
      `source ${file}`,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a zsh expansion
      'words=("$@"); CURRENT=$#; PREFIX="${words[-1]}"; _convene',
    ].join('\n');
    // Sourced where the completion system is not on yet (no compinit in ~/.zshrc), it turns it
    // on and registers itself, instead of failing with "command not found: compdef".
    const bare = execFileSync('zsh', ['-f', '-c', `source ${file} && print -r -- $_comps[convene]`], {
      encoding: 'utf8',
      env: { ...process.env, ...owner.env, HOME: owner.home, ZDOTDIR: owner.home },
    });
    expect(bare.trim()).toBe('_convene');
    const complete = (...words: string[]) =>
      execFileSync('zsh', ['-f', '-c', harness, 'zsh', ...words], {
        encoding: 'utf8',
        env: { ...process.env, ...owner.env },
      })
        .trim()
        .split('\n');
    // Every command at the top (the table's keys had kept their quotes: nothing matched).
    expect(complete('convene', 'sp')).toContain(
      'space:create, list, show, update, close spaces; pick the default',
    );
    expect(complete('convene', 'artifact', 'e')).toContain('edit:edit a document in $EDITOR under its lock');
    expect(complete('convene', 'tail', '')).toEqual(['Release plan', 'Tools']);
    expect(complete('convene', 'artifact', 'list', '--space', '')).toEqual(['Release plan', 'Tools']);
    expect(complete('convene', 'tail', '--lines', '5', '--si')).toContain(
      '--since:start after this: 10m, 2h, 09:30, yesterday, 2030-01-01 12:00, 2030-01-01T12:00:00Z',
    );
    // Choices, nothing, or file names where a file goes: never the file names elsewhere.
    expect(complete('convene', 'completion', '')).toEqual(['bash', 'zsh', 'fish']);
    expect(complete('convene', 'artifact', 'edit', '')).toEqual(['']);
    expect(complete('convene', 'tail', '--since', '')).toEqual(['']);
    expect(complete('convene', '--url', 'http://127.0.0.1:9', 'tail', '')).toEqual(['']);
    expect(complete('convene', 'artifact', 'create', 'x.md', '--file', '')).toEqual(['FILES']);
  });

  it.skipIf(!hasShell('fish'))('completes space names in fish', async () => {
    const file = join(owner.home, 'convene.fish');
    writeFileSync(file, (await owner.run(['completion', 'fish'])).stdout);
    const complete = (line: string) =>
      execFileSync(
        'fish',
        [
          '-c',
          `function convene; "${process.execPath}" "${bundle}" $argv; end; source ${file}; complete -C '${line}'`,
        ],
        { encoding: 'utf8', env: { ...process.env, ...owner.env }, cwd: owner.home },
      )
        .trim()
        .split('\n')
        .map((candidate) => candidate.split('\t')[0]);
    expect(complete('convene tail ')).toEqual(['Release plan', 'Tools']);
    expect(complete('convene artifact list --space T')).toEqual(['Tools']);
    // The spaces of the server named on the line, which this machine holds none for.
    expect(complete('convene --url http://127.0.0.1:9 tail ')).toEqual(['']);
    expect(complete('convene --url http://127.0.0.1:9 send --space ')).toEqual(['']);
    expect(complete('convene sp')).toEqual(['space']);
    // Choices, nothing, or file names where a file goes (the directory holds convene.fish).
    expect(complete('convene completion ')).toEqual(['bash', 'fish', 'zsh']);
    expect(complete('convene kick ')).toEqual(['']);
    expect(complete('convene tail --since ')).toEqual(['']);
    expect(complete('convene artifact create x.md --file convene.f')).toEqual(['convene.fish']);
  });

  it('prints zsh and fish scripts naming every command', async () => {
    const zsh = (await owner.run(['completion', 'zsh'])).stdout;
    expect(zsh).toContain('#compdef convene');
    expect(zsh).toContain("_convene_subcommands=(\n  '' 'space:");
    expect(zsh).toMatch(/edit:edit a document in \$EDITOR/);
    const fish = (await owner.run(['completion', 'fish'])).stdout;
    expect(fish).toContain("complete -c convene -n '__fish_use_subcommand' -a 'space'");
    expect(fish).toContain("-a 'edit'");
  });
});

describe('hints that say what to do next', () => {
  it('webhook add --help names the addresses refused and the server setting that allows them', async () => {
    const help = (await owner.run(['webhook', 'add', '--help'])).stdout.replace(/\s+/g, ' ');
    expect(help).toContain('refuses loopback, private and link-local addresses');
    expect(help).toContain('unless it runs with WEBHOOK_ALLOW_PRIVATE=true');
  });

  it('send of a text that starts with "-": the same command line with the text after --', async () => {
    const dashed = await owner.run(['send', '-5 degrees outside']);
    expect(dashed.code).toBe(2);
    expect(dashed.stderr).toContain("unknown option '-5 degrees outside'");
    expect(dashed.stderr).toContain('A text that starts with "-" goes after --, which ends the options:');
    expect(dashed.stderr).toContain('`convene send -- "-5 degrees outside"`');
    // The space and the other options stay where they were; copied, it sends the text there.
    const named = await owner.run(['send', 'Tools', '-1 from me', '-q']);
    const [line] = suggested(named.stderr);
    expect(line).toEqual(['send', 'Tools', '-q', '--', '-1 from me']);
    expect((await owner.run(line!)).code).toBe(0);
    const json = await owner.run(['send', '-ok', '--json']);
    // Each part of the JSON hint a sentence of its own.
    expect(JSON.parse(json.stderr).hint).toContain(
      '`convene send --json -- "-ok"`. Run `convene send --help` for usage.',
    );
    // An option mistyped is suggested as one, not as text.
    const typo = await owner.run(['send', '--fiel', 'notes.md']);
    expect(typo.stderr).toContain('Did you mean --file?');
    expect(typo.stderr).not.toContain('goes after --');
    // An option nobody has is one all the same: sent as the text, the next word would be the space.
    const unknown = await owner.run(['send', '--json', '--bogus', 'x']);
    expect(unknown.code).toBe(2);
    expect(JSON.parse(unknown.stderr).hint).not.toContain('goes after --');
  });

  it('any command with arguments: a name that starts with "-" gets the command line with it after --', async () => {
    const create = await owner.run(['artifact', 'create', '-draft.md'], {
      input: '# Draft\n',
      stdin: 'pipe',
    });
    expect(create.code).toBe(2);
    expect(create.stderr).toContain("unknown option '-draft.md'");
    expect(create.stderr).toContain('A name that starts with "-" goes after --, which ends the options:');
    expect(create.stderr).toContain('`convene artifact create -- "-draft.md"`');
    // The options that followed it move before --, where they are still options; copied, it works.
    const withFile = await owner.run(['artifact', 'create', '-draft.md', '--file', 'draft.md']);
    const [line] = suggested(withFile.stderr);
    expect(line).toEqual(['artifact', 'create', '--file', 'draft.md', '--', '-draft.md']);
    writeFileSync(join(owner.home, 'draft.md'), '# Draft\n');
    expect((await owner.run(line!)).code).toBe(0);
    const edit = await owner.run(['artifact', 'edit', '-draft.md', '--json']);
    expect(edit.code).toBe(2);
    expect(JSON.parse(edit.stderr).hint).toContain('`convene artifact edit --json -- "-draft.md"`.');
    const show = await owner.run(['artifact', 'show', '-draft.md']);
    const [shown] = suggested(show.stderr);
    expect(shown).toEqual(['artifact', 'show', '--', '-draft.md']);
    expect((await owner.run(shown!)).stdout).toContain('# Draft');
    // A typo of an option stays one: its suggestion, not the line with --.
    const typo = await owner.run(['artifact', 'create', 'x.md', '--fiel', 'draft.md']);
    expect(typo.stderr).toContain('Did you mean --file?');
    expect(typo.stderr).not.toContain('goes after --');
    const mention = await owner.run(['send', 'hi', '--mentoin', 'Ada']);
    expect(mention.stderr).toContain('Did you mean --mention?');
    expect(mention.stderr).not.toContain('goes after --');
    // One dash where two go (as Go's flags take them): that option, not a name after --.
    for (const [args, meant] of [
      [['space', 'show', '-json'], '--json'],
      [['artifact', 'download', 'x.md', '-at', '2'], '--at'],
      [['tail', '-lines', '5'], '--lines'],
      // A long option that has a short one too: not `-f ile`, `-s pace`, `-q uiet`.
      [['send', 'hello', '-file'], '--file'],
      [['messages', '-space', 'Chat'], '--space'],
      [['space', 'show', '-quiet'], '--quiet'],
    ] as const) {
      const oneDash = await owner.run([...args]);
      expect({ args, code: oneDash.code }).toEqual({ args, code: 2 });
      expect(oneDash.stderr).toContain(`Did you mean ${meant}?`);
      expect(oneDash.stderr).not.toContain('goes after --');
    }
  });

  it('doctor with spaces saved but none the default suggests space use', async () => {
    const someone = new User(server.url);
    try {
      await someone.run(['space', 'create', 'Kept']);
      const file = join(someone.env.XDG_CONFIG_HOME!, 'convene/credentials.json');
      const saved = someone.credentials();
      delete saved.hosts[server.url].defaultSpace;
      writeFileSync(file, JSON.stringify(saved), { mode: 0o600 });
      const checks = (await someone.run(['doctor', '--json'])).json().checks;
      expect(checks).toContainEqual({
        name: 'default space',
        status: 'ok',
        detail: 'none (1 saved here)',
        hint: 'Pick one with `convene space use SPACE` (`convene space list` lists them).',
      });
      const [line] = suggested(checks.at(-1).hint);
      expect((await someone.run(line!.map((word) => (word === 'SPACE' ? 'Kept' : word)))).code).toBe(0);
      expect((await someone.run(['doctor', '--json'])).json().checks.at(-1).detail).toContain('Kept: open');
    } finally {
      someone.remove();
    }
  });

  it('join --help shows a space’s whole id, the form a join takes', async () => {
    const help = (await owner.run(['join', '--help'])).stdout;
    expect(help).toMatch(
      /convene join [0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12} --key inv_/,
    );
    const short = await owner.run(['join', '3f2e8c1a', '--key', 'inv_x', '--name', 'X']);
    expect(short.code).toBe(2);
  });
});

describe('doctor', () => {
  it('checks the server, version, credentials, clock and default space', async () => {
    const ok = await owner.run(['doctor', '--json']);
    expect(ok.code).toBe(0);
    const checks = Object.fromEntries(ok.json().checks.map((c: any) => [c.name, c.status]));
    expect(checks).toMatchObject({
      server: 'ok',
      'API version': 'ok',
      clock: 'ok',
      'credentials file': 'ok',
      'default space': 'ok',
    });
    const text = await owner.run(['doctor']);
    expect(text.stdout).toMatch(/✓ server: .* answers/);
    expect(text.stdout).toMatch(/✓ credentials file: .*credentials\.json \(private\)/);
  });

  it('says of a credentials file not made yet that it is not there, not that it is private', async () => {
    const newcomer = new User(server.url);
    try {
      const text = await newcomer.run(['doctor']);
      expect(text.stdout).toMatch(
        /✓ credentials file: .*credentials\.json \(none yet: made, private, when a key is saved\)/,
      );
      expect(text.stdout).not.toContain('(private)');
    } finally {
      newcomer.remove();
    }
  });

  it('fails (exit 1) with what to do when the file is readable by others or the server is down', async () => {
    chmodSync(join(owner.env.XDG_CONFIG_HOME!, 'convene/credentials.json'), 0o644);
    const loose = await owner.run(['doctor']);
    expect(loose.code).toBe(1);
    expect(loose.stdout).toContain('✗ credentials file');
    expect(loose.stdout).toContain('chmod 600');
    // Its own check says so: not a second time on stderr.
    expect(loose.stderr).not.toContain('readable by other users');
    chmodSync(join(owner.env.XDG_CONFIG_HOME!, 'convene/credentials.json'), 0o600);

    // A credentials file it cannot read is one failed check; the others still run.
    const broken = new User(server.url);
    try {
      mkdirSync(join(broken.env.XDG_CONFIG_HOME!, 'convene'), { recursive: true, mode: 0o700 });
      writeFileSync(join(broken.env.XDG_CONFIG_HOME!, 'convene/credentials.json'), '{"version": 1, oops', {
        mode: 0o600,
      });
      const unreadable = await broken.run(['doctor', '--json']);
      expect(unreadable.code).toBe(1);
      const checks = unreadable.json().checks;
      expect(checks.map((c: any) => [c.name, c.status])).toEqual([
        ['server', 'ok'],
        ['API version', 'ok'],
        ['clock', 'ok'],
        ['credentials file', 'fail'],
        ['token', 'warn'],
        ['default space', 'warn'],
      ]);
      expect(checks[3].detail).toContain('is not a credentials file convene can read');
      expect(checks[3].hint).toContain('Move it aside');
      expect(checks[4].detail).toContain('not checked');
      expect(JSON.parse(unreadable.stderr).error).toBe('1 check failed: credentials file');
      const text = await broken.run(['doctor']);
      expect(text.stdout).toMatch(/✓ server: .* answers/);
      expect(text.stdout).toContain('✗ credentials file');
    } finally {
      broken.remove();
    }

    const down = await owner.run(['doctor', '--url', 'http://127.0.0.1:9']);
    expect(down.code).toBe(1);
    expect(down.stdout).toContain('✗ server');
    // No key for that server, but some for this one: said, with how to use them.
    expect(down.stdout).toContain('default space: none yet for this server');
    // (As many as the file's earlier tests left this owner.)
    expect(down.stdout).toMatch(
      new RegExp(
        `Keys are saved for another server: ${server.url} \\(\\d+ spaces?\\)\\. Add \`--url ${server.url}\``,
      ),
    );
    expect(down.stderr).toContain('failed: server');

    // With a saved token and default space for the server that is down: neither is ticked.
    const stranded = new User('http://127.0.0.1:9');
    try {
      const saved = owner.credentials();
      const host = { ...saved.hosts[server.url], userToken: 'usr_savedButUnchecked' };
      mkdirSync(join(stranded.env.XDG_CONFIG_HOME!, 'convene'), { recursive: true, mode: 0o700 });
      writeFileSync(
        join(stranded.env.XDG_CONFIG_HOME!, 'convene/credentials.json'),
        JSON.stringify({ ...saved, hosts: { 'http://127.0.0.1:9': host } }),
        { mode: 0o600 },
      );
      const checks = (await stranded.run(['doctor', '--json'])).json().checks;
      expect(checks).toContainEqual({
        name: 'token',
        status: 'warn',
        detail: 'usr_save… (saved): not checked: the server does not answer',
      });
      expect(checks).toContainEqual(
        expect.objectContaining({
          name: 'default space',
          status: 'warn',
          detail: expect.stringContaining('not checked'),
        }),
      );
      const text = await stranded.run(['doctor']);
      expect(text.stdout).not.toContain('✓ token');
      expect(text.stdout).toContain('! token: usr_save… (saved): not checked');
    } finally {
      stranded.remove();
    }
  });
});

describe('a server that is not Convene', () => {
  it('is named as such, by its status, not its page; doctor tells it from nothing listening', async () => {
    const other = createServer((_request, response) => {
      response.writeHead(404, { 'content-type': 'text/html' });
      response.end('<html>nope</html>');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    const someone = new User(url);
    try {
      const said = `the server at ${url} answered HTTP 404 but is not a Convene server (or not this API version)`;
      // A request that reaches it, and a command that first looks for a saved space.
      for (const args of [['space', 'create', 'Elsewhere'], ['messages']]) {
        const result = await someone.run(args);
        expect({ args, code: result.code }).toEqual({ args, code: 1 });
        expect(result.stderr).toBe(
          `✗ ${said}\nCheck the address (--url or CONVENE_URL); \`convene doctor\` checks the server.\n`,
        );
      }
      const json = await someone.run(['space', 'create', 'Elsewhere', '--json']);
      expect(JSON.parse(json.stderr)).toMatchObject({ error: said, status: 404, exitCode: 1 });

      const doctor = await someone.run(['doctor']);
      expect(doctor.code).toBe(1);
      expect(doctor.stdout).toContain(`✗ server: ${said}`);
      expect(doctor.stdout).not.toContain('No server answers there');
      expect(doctor.stdout).not.toContain('<html>');
      // Doctor does not point at itself.
      expect(doctor.stdout).toContain('Check the address (--url or CONVENE_URL).');
      expect(doctor.stdout).not.toContain('`convene doctor`');
    } finally {
      someone.remove();
      other.close();
    }
    // Nothing listening is still said so.
    const down = await owner.run(['doctor', '--url', url]);
    expect(down.stdout).toContain(`✗ server: ${url} does not answer`);
    expect(down.stdout).toContain('No server answers there');
  });

  it('space create where a web server answers 501 (`python3 -m http.server`) is only named as not Convene: no space may have been made; behind a proxy’s 502 it may', async () => {
    let status = 501;
    const other = createServer((_request, response) => {
      response.writeHead(status, { 'content-type': 'text/html' });
      response.end('<html>Unsupported method</html>');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    const someone = new User(url);
    try {
      const created = await someone.run(['space', 'create', 'x']);
      expect(created.code).toBe(1);
      expect(created.stderr).toBe(
        `✗ the server at ${url} answered HTTP 501 but is not a Convene server (or not this API version)\nCheck the address (--url or CONVENE_URL); \`convene doctor\` checks the server.\n`,
      );
      const json = JSON.parse((await someone.run(['space', 'create', 'x', '--json'])).stderr);
      expect(json).toMatchObject({ status: 501, exitCode: 1 });
      expect(json.mayHaveRun).toBeUndefined();
      // A proxy's 502 may come after Convene behind it took the request: that is still said.
      status = 502;
      const proxied = await someone.run(['space', 'create', 'x']);
      expect(proxied.code).toBe(1);
      expect(proxied.stderr).toContain('answered HTTP 502 but is not a Convene server');
      expect(proxied.stderr).toContain('The space may have been created all the same');
    } finally {
      someone.remove();
      other.close();
    }
  });

  it('saves nothing from a 200 that is not Convene’s (another API’s `{}`, an empty body, `{}` with the header): every key saved before still works', async () => {
    // Another API at a mistyped address, a webhook receiver, and something that sends Convene's
    // header but not its answers (another API version behind a proxy, say).
    const answers: Record<string, (response: import('node:http').ServerResponse) => void> = {
      'another API': (r) => r.writeHead(200, { 'content-type': 'application/json' }).end('{}'),
      'an empty 200': (r) => r.writeHead(200).end(),
      'a page': (r) =>
        r
          .writeHead(200, { 'content-type': 'text/html' })
          .end('<!doctype html><title>Another app</title><p>Hello'),
      'the header only': (r) =>
        r.writeHead(200, { 'content-type': 'application/json', 'api-version': '1' }).end('{}'),
    };
    const someone = new User(server.url);
    try {
      expect((await someone.run(['space', 'create', 'Kept'])).code).toBe(0);
      const before = readFileSync(join(someone.env.XDG_CONFIG_HOME!, 'convene/credentials.json'), 'utf8');
      for (const [what, answer] of Object.entries(answers)) {
        const other = createServer((_request, response) => answer(response));
        await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
        const url = `http://localhost:${(other.address() as AddressInfo).port}`;
        try {
          const runs = {
            create: await someone.run(['space', 'create', 'oops', '--url', url]),
            join: await someone.run([
              'join',
              `${url}/join/3f2e8c1a-5b7d-4e9f-a2c6-1d0b9e8f7a65#key=inv_abc`,
              '--name',
              'Z',
              '--url',
              url,
            ]),
            login: await someone.run(['login', '--url', url]),
          };
          for (const [command, run] of Object.entries(runs)) {
            expect({ what, command, code: run.code }).toEqual({ what, command, code: 1 });
            expect(run.stderr).not.toContain('bug in convene');
            // The error's lines alone: no stack trace of the answer read after it (ERR_INVALID_STATE).
            expect({ what, command, stack: run.stderr }).not.toEqual({
              what,
              command,
              stack: expect.stringMatching(/ERR_INVALID_STATE|\n\s+at /),
            });
            expect({ what, command, said: run.stderr }).toEqual({
              what,
              command,
              said: expect.stringContaining(
                what === 'the header only'
                  ? `✗ the server at ${url} answered, but not as a Convene server does (or not this API version)`
                  : `✗ the server at ${url} answered HTTP 200 but is not a Convene server (or not this API version)`,
              ),
            });
          }
          // Nothing was written: not a space keyed `undefined`, not a pending join without its participant.
          expect(readFileSync(join(someone.env.XDG_CONFIG_HOME!, 'convene/credentials.json'), 'utf8')).toBe(
            before,
          );
        } finally {
          other.close();
        }
      }
      const list = await someone.run(['space', 'list']);
      expect(list.code).toBe(0);
      expect(list.stdout).toContain('Kept');
    } finally {
      someone.remove();
    }
  });

  it('reads the rest of a credentials file around an entry it cannot read, keeps that entry as it was, and doctor lists it', async () => {
    const someone = new User(server.url);
    try {
      expect((await someone.run(['space', 'create', 'Kept', '--owner-name', 'Grace'])).code).toBe(0);
      const file = join(someone.env.XDG_CONFIG_HOME!, 'convene/credentials.json');
      // What convene 0.1.0 saved from `200 {}` answers: a space keyed "undefined", a pending join
      // without its participant.
      const broken = someone.credentials();
      const bad = {
        spaces: { undefined: { name: 'oops', role: 'owner', savedAt: '2026-11-29T10:00:00.000Z' } },
        pendingJoins: { x: { spaceId: 'x', invitationKey: 'inv_abc', name: 'Z' } },
      };
      broken.hosts['http://localhost:3953'] = bad;
      writeFileSync(file, JSON.stringify(broken), { mode: 0o600 });

      const sent = await someone.run(['send', 'still here', '--space', 'Kept']);
      expect(sent.code).toBe(0);
      const where =
        'hosts["http://localhost:3953"].spaces["undefined"], hosts["http://localhost:3953"].pendingJoins["x"]';
      expect(sent.stderr).toContain(`holds 2 entries convene cannot read, left out: ${where}`);
      const doctor = await someone.run(['doctor', '--json']);
      expect(doctor.json().checks).toContainEqual(
        expect.objectContaining({
          name: 'credentials entries',
          status: 'warn',
          detail: expect.stringContaining(where),
        }),
      );
      // A change saved moves them aside, verbatim; the file then reads clean.
      expect((await someone.run(['space', 'use', 'Kept'])).code).toBe(0);
      const after = someone.credentials();
      expect(after.unreadable).toEqual([
        {
          at: 'hosts["http://localhost:3953"].spaces["undefined"]',
          value: bad.spaces.undefined,
          setAsideAt: expect.any(String),
        },
        {
          at: 'hosts["http://localhost:3953"].pendingJoins["x"]',
          value: bad.pendingJoins.x,
          setAsideAt: expect.any(String),
        },
      ]);
      const quiet = await someone.run(['messages', '--space', 'Kept']);
      expect(quiet.code).toBe(0);
      expect(quiet.stdout).toContain('still here');
      expect(quiet.stderr).toBe('');
      const again = await someone.run(['doctor']);
      expect(again.stdout).toContain('! credentials entries: 2 entries convene cannot read, left out');
      expect(again.stdout).toContain('kept, as they were, under "unreadable"');
    } finally {
      someone.remove();
    }
  });

  it('tells something that resets or closes the connection, or answers in another protocol, from nothing listening', async () => {
    // Not HTTP at all: a program that resets every connection, one that closes it once asked, and
    // one that answers in its own protocol (an SSH server, say).
    const behaviours = {
      reset: (socket: Socket) => socket.resetAndDestroy(),
      closed: (socket: Socket) => socket.once('data', () => socket.end()),
      'not HTTP': (socket: Socket) => socket.once('data', () => socket.end('SSH-2.0-OpenSSH_9.6\r\n')),
    };
    for (const [behaviour, act] of Object.entries(behaviours)) {
      const other = createNetServer(act);
      await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
      const port = (other.address() as AddressInfo).port;
      const url = `http://127.0.0.1:${port}`;
      try {
        const doctor = await owner.run(['doctor', '--url', url]);
        expect({ behaviour, code: doctor.code }).toEqual({ behaviour, code: 1 });
        const said =
          behaviour === 'not HTTP' ? 'answers, but not in HTTP' : 'closed the connection without answering';
        expect(doctor.stdout).toContain(`✗ server: ${url} ${said}`);
        expect(doctor.stdout).toContain(`Something on port ${port} ${said}: not a Convene server`);
        // The port is taken: a server started there would fail; never "start one", nor "does not answer".
        expect(doctor.stdout).not.toContain('No server answers there');
        expect(doctor.stdout).not.toContain('convene serve');
        expect(doctor.stdout).not.toContain(`${url} does not answer`);
        const command = await owner.run(['messages', '--url', url]);
        expect({ behaviour, code: command.code }).toEqual({ behaviour, code: 1 });
        expect(command.stderr).toContain(`Something on port ${port} ${said}: not a Convene server`);
        expect(command.stderr).not.toContain('convene serve');
      } finally {
        other.close();
      }
    }
  });

  it('says of an https:// address where the server speaks plain HTTP that it does, and the http:// one', async () => {
    const https = server.url.replace(/^http:/, 'https:');
    const someone = new User(https);
    try {
      for (const args of [['space', 'create', 'Secure'], ['messages']]) {
        const result = await someone.run(args);
        expect({ args, code: result.code, stderr: result.stderr }).toEqual({
          args,
          code: 1,
          stderr: `✗ ${https} answers in plain HTTP, not HTTPS: the TLS handshake failed\nUse ${server.url} instead (--url or CONVENE_URL).\n`,
        });
      }
      // Not OpenSSL's words, whose newline broke doctor's line; not "start a server" either.
      const doctor = await someone.run(['doctor']);
      expect(doctor.code).toBe(1);
      expect(doctor.stdout).toContain(`✗ server: ${https} answers in plain HTTP, not HTTPS`);
      expect(doctor.stdout).toContain(`  Use ${server.url} instead (--url or CONVENE_URL).`);
      expect(doctor.stdout).not.toContain('ssl3');
      expect(doctor.stdout).not.toContain('No server answers there');
      // Every line a check's (a mark) or its hint's (indented): none broken off.
      for (const line of doctor.stdout.trimEnd().split('\n')) expect(line).toMatch(/^(✓|✗|!) |^ {2}\S/);
    } finally {
      someone.remove();
    }
  });
});
