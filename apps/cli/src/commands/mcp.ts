import { type Command, Option } from '@commander-js/extra-typings';
import { type App, examples } from '../app';
import { verbatim } from '../lib/quote';

const CLIENTS = ['claude', 'cursor', 'vscode'] as const;
type Client = (typeof CLIENTS)[number];

/** Where each client reads its MCP servers from, and the shape it wants. */
const FORMATS: Record<Client, { file: string; config: (server: object) => object }> = {
  claude: {
    file: '.mcp.json (Claude Code, in the project)',
    config: (s) => ({ mcpServers: { convene: { type: 'http', ...s } } }),
  },
  cursor: {
    file: '.cursor/mcp.json (or ~/.cursor/mcp.json)',
    config: (s) => ({ mcpServers: { convene: s } }),
  },
  vscode: { file: '.vscode/mcp.json', config: (s) => ({ servers: { convene: { type: 'http', ...s } } }) },
};

export function registerMcp(program: Command, app: App): void {
  const mcp = program
    .command('mcp')
    .summary('connect MCP hosts (Claude Code, Cursor, VS Code) to this server')
    .description(
      'Connect an MCP host (Claude Code, Cursor, VS Code) to this server’s /mcp endpoint, where ' +
        'agents use spaces through tools. `convene mcp config` prints the configuration to save.',
    )
    .usage('<command> [options]')
    .addHelpText(
      'after',
      examples('convene mcp config > .mcp.json', 'convene mcp config --client vscode --space "Release plan"'),
    );
  mcp
    .command('config')
    .summary('print the MCP configuration for this server')
    .description(
      'Print the configuration that connects an MCP host to this server’s /mcp endpoint. Without ' +
        '--space, tools take each space key as their privateKey argument (create or join first); ' +
        'with --space, the connection carries that space’s key in the X-Private-Key header.',
    )
    .addOption(new Option('--client <client>', 'the MCP host').choices(CLIENTS).default('claude' as Client))
    .option('-s, --space <space>', 'send this space’s key with every call (name or id)')
    .addHelpText(
      'after',
      examples(
        'convene mcp config > .mcp.json',
        'convene mcp config --client vscode > .vscode/mcp.json',
        'convene mcp config --client cursor --space "Release plan"',
      ),
    )
    .action(async (options, command) => {
      const ctx = app.context(command);
      const space = options.space === undefined ? undefined : ctx.space(options.space);
      const server = { url: `${ctx.url}/mcp`, ...(space ? { headers: { 'X-Private-Key': space.key } } : {}) };
      const format = FORMATS[options.client];
      const config = format.config(server);
      // The configuration is the output, in every mode: it is JSON already.
      ctx.out.json(config);
      ctx.out.hint(`Save it as ${format.file}.`);
      // A project's MCP file is easily committed along with the project: say what it holds.
      if (space)
        ctx.out.warn(
          `this configuration holds your ${space.role === 'owner' ? 'owner' : 'participant'} key of "${space.name}": ` +
            'keep the file out of version control (add it to .gitignore)',
        );
      if (options.client === 'claude') {
        // Not the key itself, which would stay in a terminal's scrollback or a CI log (as `space
        // create` does not print it): `convene space key` prints it as the command runs.
        const header = space
          ? ` --header "X-Private-Key: $(${ctx.line('space key', { args: [verbatim(space.spaceId)] })})"`
          : '';
        ctx.out.hint(`Or: claude mcp add --transport http convene ${server.url}${header}`);
        if (space)
          ctx.out.hint('(`convene space key` prints the key it keeps as that runs; it is not shown here.)');
      }
    });
}
