/**
 * The workspace's import rules, checked by `pnpm lint` (`pnpm deps`): no import circles anywhere,
 * and dependencies that point one way through the layers:
 *
 *   contract <- core <- server <- (nothing)
 *   contract <- sdk (types only) <- cli, web
 *
 * Tests, benchmarks and scripts may reach further (a test starts a real server on a database from
 * core's testing helpers; the server's tests drive it through the SDK; the SDK's generator reads
 * the contract); the rules below bind each
 * package's shipped source. The allowed exceptions: the CLI's `serve` command loads the server
 * lazily, with a dynamic import; and the server serves the web app's build, through the one
 * entry of @convene/web made for it (apps/web/index.ts: where the build is, how to read it),
 * which itself loads no browser code and no SDK.
 */
const layer = (name, comment, from, to) => ({ name, comment, severity: 'error', from, to });

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No module may import itself back through a chain of imports.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      comment:
        'Every import resolves: a package is imported only where its package.json lists it. (The shared vitest config is read from each package.)',
      severity: 'error',
      from: { pathNot: '^vitest\\.shared\\.ts$' },
      to: { couldNotResolve: true },
    },
    layer(
      'contract-is-zod-only',
      'The wire contract depends on zod and nothing else.',
      { path: '^packages/contract/src/' },
      { pathNot: ['^packages/contract/src/', '(^|/)node_modules/zod/'] },
    ),
    layer(
      'core-below-transports',
      'core is the domain: it never imports the server, the SDK or the apps.',
      { path: '^packages/core/src/' },
      { path: '^(packages/(server|sdk)|apps)/' },
    ),
    layer(
      'core-has-no-transport',
      'core never imports tRPC, Fastify, MCP or node:http.',
      { path: '^packages/core/src/' },
      {
        path: [
          '(^|/node_modules/)(fastify|@fastify/[^/]+|@trpc/[^/]+|trpc-to-openapi|@modelcontextprotocol/[^/]+)(/|$)',
          '^(node:)?https?$',
          '^(node:)?http2$',
        ],
      },
    ),
    layer(
      'nothing-imports-the-server',
      'The server is the outer ring: only the CLI may load it (`convene serve`), lazily.',
      { pathNot: '^packages/server/' },
      { path: '^packages/server/', dependencyTypesNot: ['dynamic-import'] },
    ),
    layer(
      'only-the-cli-loads-the-server',
      'The one lazy import of the server is the CLI’s.',
      { pathNot: ['^packages/server/', '^apps/cli/src/'] },
      { path: '^packages/server/' },
    ),
    layer(
      'server-not-on-clients',
      'The server never imports the SDK or the apps, but the web app’s entry for serving its build. Its tests drive the service through the SDK, as agents do.',
      { path: '^packages/server/', pathNot: '^packages/server/test/' },
      { path: '^(packages/sdk|apps)/', pathNot: '^apps/web/(index\\.ts|src/shell/html\\.ts)$' },
    ),
    layer(
      'web-serving-entry-is-asset-only',
      'What the server loads of the web app reads files (and hashes them) and fills a slot: no browser code, no SDK.',
      { path: '^apps/web/(index\\.ts|src/shell/html\\.ts)$' },
      { pathNot: ['^apps/web/src/shell/html\\.ts$', '^(node:)?(crypto|fs|path|url)$'] },
    ),
    layer(
      'sdk-on-the-contract-types-only',
      'The SDK ships without the server, core, or zod at run time: the contract only as types.',
      { path: '^packages/sdk/src/' },
      { path: '^packages/contract/', dependencyTypesNot: ['type-only'] },
    ),
    layer(
      'sdk-not-on-core-or-server',
      'The SDK talks to the service over HTTP only.',
      { path: '^packages/sdk/src/' },
      { path: '^(packages/(core|server)|apps)/' },
    ),
    layer(
      'clients-on-the-sdk',
      'The CLI and the web app talk to the service through the SDK only.',
      { path: '^apps/(cli|web)/src/' },
      { path: '^packages/(core|contract)/' },
    ),
    layer(
      'web-is-light',
      'The browser code of the web app is its own modules, the SDK and DOMPurify: nothing else is bundled into the pages (no Node built-ins, no other package).',
      { path: '^apps/web/src/' },
      { pathNot: ['^apps/web/src/', '^packages/sdk/src/', '(^|/)node_modules/dompurify/'] },
    ),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist|\\.turbo|\\.data)/' },
    // Type-only imports count: a circle of types is still a circle to read through.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.base.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.tsx', '.js', '.mjs', '.cjs', '.d.ts'],
    },
  },
};
