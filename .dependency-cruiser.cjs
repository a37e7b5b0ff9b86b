// Layer rules of the product, checked by `npm run layers` (one of the static checks of `npm test`).
// A module imports only from its own layer or the layers below it; the table is in
// docs/DESIGN.md, section "Layout". Type-only imports count too, and no cycle is allowed.

/** Bottom to top. A folder may import the folders of lower layers, never of higher ones. */
const LAYERS = [
  ['lib/redact', 'lib/shared'], // leaves: the five detectors; constants both sides of the wire share
  ['lib/engine'], // the pure core: outcome, policy, transport, rate gate, call-node
  ['lib/providers', 'lib/project', 'lib/sim'], // wire adapters; project files; the provider simulator
  ['db'], // storage
  ['lib/contracts'], // one module per boundary request: its schema, limits and refusal words; the caller's limits
  ['lib/flow'], // the run loop, the recorder, the run record
  ['lib/observe'], // traces, metrics, logs and alerts: observers of every run (lib/flow/run-observers.ts)
  ['lib/dashboard', 'lib/forms', 'lib/queue', 'lib/limits'], // view models and form schemas; runs as jobs, the worker; the structural-limits probe
  ['lib/actions', 'lib/server', 'lib/cli'], // server actions, the dashboard's server glue, the command
  ['components', 'app'], // React and routes; proxy.ts at the root stands with them (rule nothing-imports-proxy)
];

// Tests stand above every layer (a unit test beside its module may bring in what it needs to
// drive it); production code never imports them (rule production-not-to-tests).
const TESTS = '\\.test\\.tsx?$';
const path = (folder) => `^${folder.replace('/', '\\/')}/`;
const above = (i) => LAYERS.slice(i + 1).flat();

const layerRules = LAYERS.flatMap((folders, i) =>
  i === LAYERS.length - 1
    ? []
    : folders.map((folder) => ({
        name: `layer:${folder}`,
        comment: `${folder} is below ${above(i).join(', ')}: it must not import them`,
        severity: 'error',
        from: { path: path(folder), pathNot: TESTS },
        to: {
          path: `^(${above(i)
            .map((f) => f.replace('/', '\\/'))
            .join('|')})/`,
        },
      })),
);

/** Folders of one layer that stay independent of each other (peers, not a stack). */
const peerRules = [
  { from: 'lib/providers', to: '^(lib/project|lib/sim)/' },
  { from: 'lib/sim', to: '^(lib/engine|lib/providers|lib/project)/' }, // an independent fake of the providers
  // the project files name the simulator's script schema, nothing else of the simulator
  { from: 'lib/project', to: '^(lib/providers/|lib/sim/(?!script-schema\\.ts$))' },
  { from: 'lib/dashboard', to: '^(lib/forms|lib/queue|lib/limits)/' },
  { from: 'lib/forms', to: '^(lib/dashboard|lib/queue|lib/limits)/' },
  { from: 'lib/queue', to: '^(lib/dashboard|lib/forms|lib/limits)/' },
  { from: 'lib/limits', to: '^(lib/dashboard|lib/forms|lib/queue)/' },
  { from: 'lib/server', to: '^(lib/actions|lib/cli)/' },
  { from: 'lib/cli', to: '^(lib/actions|lib/server)/' },
  { from: 'lib/actions', to: '^lib/cli/' },
  // a component may bring its own stylesheet from app/styles/ (CSS, not code: nothing flows back up)
  { from: 'components', to: '^app/(?!styles/[^/]+\\.css$)' },
].map(({ from, to }) => ({
  name: `peer:${from}`,
  comment: `${from} must not import ${to}`,
  severity: 'error',
  from: { path: path(from), pathNot: TESTS },
  to: { path: to },
}));

module.exports = {
  forbidden: [
    ...layerRules,
    ...peerRules,
    {
      name: 'client-stands-alone',
      comment: 'the typed client (aqven/client, lib/client) ships to services and browsers: no server code, not even its types',
      severity: 'error',
      from: { path: '^lib/client/', pathNot: TESTS },
      to: { path: '^(lib/(?!client/)|db/|app/|components/|proxy\\.ts$)' },
    },
    {
      name: 'client-no-node-builtins',
      comment: 'the typed client runs in browsers too: only fetch, no node: module',
      severity: 'error',
      from: { path: '^lib/client/', pathNot: TESTS },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'no-circular',
      comment: 'a cycle makes the layers meaningless (type-only cycles included)',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'production-not-to-tests',
      comment: 'production code never imports tests, test helpers, e2e specs or benchmarks',
      severity: 'error',
      from: { path: '^((app|components|lib|db)/|proxy\\.ts$)', pathNot: TESTS },
      to: { path: '(^(test|e2e|bench)/)|\\.test\\.tsx?$' },
    },
    {
      name: 'nothing-imports-proxy',
      comment: 'proxy.ts (the request checks, run by Next.js before every route) is top layer: no module imports it',
      severity: 'error',
      from: {},
      to: { path: '^proxy\\.ts$' },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'an import that does not resolve is a bug',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|\\.next|dist|showcase|templates|drizzle)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.tsx', '.js', '.mjs', '.cjs', '.json'],
    },
    skipAnalysisNotInRules: true,
  },
};
