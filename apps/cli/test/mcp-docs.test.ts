// What the READMEs say of MCP host configurations is what `convene mcp config` prints.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { User } from './helpers/cli';
import { cliRoot, repoRoot } from './helpers/paths';

/** A README's section, from its heading to the next, with its lines joined into one. */
function section(file: string, heading: string): { text: string; prose: string } {
  const readme = readFileSync(file, 'utf8');
  const text = readme.split(`\n${heading}\n`)[1]?.split('\n## ')[0];
  if (!text) throw new Error(`${file} has no section "${heading}"`);
  return { text, prose: text.replace(/\s+/g, ' ') };
}

// No server is needed: without --space the configuration holds only the server's URL.
const user = new User('http://localhost:3000');
afterAll(() => user.remove());

async function config(args: string[]) {
  const result = await user.run(['mcp', 'config', ...args]);
  expect(result.code, result.stderr).toBe(0);
  return result.json();
}

describe('MCP host configurations in the READMEs', () => {
  it('README.md: Claude Code’s shape in full, and how Cursor’s and VS Code’s differ', async () => {
    const mcp = section(join(repoRoot, 'README.md'), '## Use it from an MCP host');
    const claude = await config([]);
    const example = JSON.parse(mcp.text.match(/```json\n([\s\S]*?)```/)![1]!);
    expect(mcp.prose).toContain("a configuration like this one, Claude Code's `.mcp.json`");
    expect(example).toEqual({
      mcpServers: {
        convene: { ...claude.mcpServers.convene, headers: { 'X-Private-Key': expect.any(String) } },
      },
    });
    expect(mcp.prose).toContain(
      "Cursor's `.cursor/mcp.json` takes the same `mcpServers` entry without `type`",
    );
    expect(await config(['--client', 'cursor'])).toEqual({
      mcpServers: { convene: { url: example.mcpServers.convene.url } },
    });
    expect(mcp.prose).toContain(
      "VS Code's `.vscode/mcp.json` puts it under `servers` instead of `mcpServers`",
    );
    expect(await config(['--client', 'vscode'])).toEqual({ servers: claude.mcpServers });
  });

  it('apps/cli/README.md: its commands run, and it says what --client and --space do', async () => {
    const mcp = section(join(cliRoot, 'README.md'), '## MCP hosts');
    const commands = mcp.text
      .match(/```sh\n([\s\S]*?)```/)![1]!
      .trim()
      .split('\n')
      .map((line) => line.split('>')[0]!.trim().split(/\s+/));
    expect(commands.map((words) => words.slice(0, 3))).toEqual([
      ['convene', 'mcp', 'config'],
      ['convene', 'mcp', 'config'],
      ['convene', 'mcp', 'config'],
    ]);
    const printed = await Promise.all(commands.map((words) => config(words.slice(3))));
    expect(printed.map((json) => Object.keys(json)[0])).toEqual(['mcpServers', 'mcpServers', 'servers']);
    expect(mcp.prose).toContain('`claude` prints `{"mcpServers": {"convene": {"type": "http", "url": …}}}`');
    expect(mcp.prose).toContain('`cursor` the same entry without `type`');
    expect(mcp.prose).toContain('`vscode` `{"servers": {"convene": {"type": "http", "url": …}}}`');
    // The key: argument or header, and a file holding one stays out of version control.
    expect(mcp.prose).toContain('each tool takes its space key as the `privateKey` argument');
    expect(mcp.prose).toContain('as the `X-Private-Key` header the connection sends with every call');
    expect(mcp.prose).toContain('keep it out of version control (add it to `.gitignore`)');
    // …as `convene mcp config --help` says it.
    const help = (await user.run(['mcp', 'config', '--help'])).stdout.replace(/\s+/g, ' ');
    expect(help).toContain('tools take each space key as their privateKey argument');
    expect(help).toContain('the connection carries that space’s key in the X-Private-Key header');
  });
});
