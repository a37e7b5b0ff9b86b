// Lint configuration, run as `eslint .` by `npm run lint` (the second step of `npm test`).
// Next's own flat configs (core web vitals + TypeScript) over every folder of the app; the few
// rules turned off or narrowed below each say why.
import { defineConfig, globalIgnores } from 'eslint/config';
import nextVitals from 'eslint-config-next/core-web-vitals';
import nextTs from 'eslint-config-next/typescript';

// Server-only modules: the database layer and the dashboard's server glue. A client component
// that imports one would ship SQLite and the file system to the browser (or fail the build).
const SERVER_ONLY = [
  { group: ['@/db', '@/db/*', '../db/*', '../../db/*'], message: 'db/ is server-only: read through a server component or /api and pass the data as props.' },
  { group: ['@/lib/server/*', '../lib/server/*', '../../lib/server/*'], message: 'lib/server is server-only.' },
  { group: ['@/lib/contracts/caller-limits'], message: "the caller's limits read the database: server-only." },
  { group: ['better-sqlite3', 'node:*', 'fs', 'path', 'child_process'], message: 'Node built-ins and the SQLite driver are server-only.' },
];

// Hand-kept SQL in db/: a statement string given to the driver (`$client.prepare('SELECT …')`,
// `.exec(…)`), or DML inside drizzle's sql`` template (which bypasses the schema's column names too).
const DML = '/\\b(insert|update|select|delete)\\b/i';
const DRIVER_CALL = 'CallExpression[callee.property.name=/^(prepare|exec)$/]';
const HAND_KEPT_SQL = [
  {
    selector: `${DRIVER_CALL} > Literal[value=${DML}]`,
    message: 'Hand-kept SQL: write the statement with drizzle over db/schema.ts (db.insert/update/select/delete … .prepare()).',
  },
  {
    selector: `${DRIVER_CALL} > TemplateLiteral > TemplateElement[value.raw=${DML}]`,
    message: 'Hand-kept SQL: write the statement with drizzle over db/schema.ts (db.insert/update/select/delete … .prepare()).',
  },
  {
    selector: `TaggedTemplateExpression[tag.name='sql'] TemplateElement[value.raw=${DML}]`,
    message: "A whole statement in sql``: use drizzle's builders so its columns are checked against db/schema.ts.",
  },
  {
    selector: "CallExpression[callee.object.name='sql'][callee.property.name='raw']",
    message: 'sql.raw() in db/: name columns through db/schema.ts (sql.identifier(col.name) or the column itself).',
  },
];

export default defineConfig([
  ...nextVitals,
  ...nextTs,
  globalIgnores([
    'node_modules/**',
    '.next/**',
    '.next-*/**',
    'dist/**',
    'next-env.d.ts',
    'test-results/**',
    'playwright-report/**',
    'showcase/**',
    'templates/**',
    'bench/results/**',
    'drizzle/**',
  ]),
  {
    rules: {
      // Unused names are errors, except a deliberately ignored `_name` (callbacks with a fixed signature).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' }],
    },
  },
  {
    // app/ holds server components only (async pages rendered once per request, never re-rendered
    // on the client), so reading the clock while rendering is the request's time, not an impurity.
    files: ['app/**/*.tsx'],
    rules: { 'react-hooks/purity': 'off' },
  },
  {
    // db/ writes its queries with drizzle over db/schema.ts, so a renamed or removed column is a type
    // error (DESIGN: Storage, "Typed statements"): no hand-kept SQL naming columns. PRAGMAs,
    // checkpoints and transaction control name none and stay allowed; tests read the file raw on purpose.
    // db/queue-jobs.ts calls graphile-worker's own SQL functions and reads its private jobs table,
    // which are graphile-worker's schema, not ours: drizzle has no columns to check them against.
    files: ['db/**/*.ts'],
    ignores: ['db/**/*.test.ts', 'db/queue-jobs.ts'],
    rules: {
      'no-restricted-syntax': ['error', ...HAND_KEPT_SQL],
    },
  },
  {
    // Rooms small enough to read (DESIGN: Layout, "Sizes"): a production file holds at most 400 lines
    // of code (blank and comment lines not counted). The two table declarations are the exception:
    // one file per dialect, which drizzle-kit reads whole to generate its migrations.
    files: ['app/**/*.{ts,tsx}', 'components/**/*.{ts,tsx}', 'lib/**/*.{ts,tsx}', 'db/**/*.ts', 'bin/**/*.mjs', 'scripts/**/*.mjs', 'proxy.ts'],
    ignores: ['**/*.test.{ts,tsx}', 'db/schema.ts', 'db/schema-pg.ts'],
    rules: { 'max-lines': ['error', { max: 400, skipBlankLines: true, skipComments: true }] },
  },
  {
    // ... and in the engine, the run loop and storage — the code every attempt runs through — a
    // function holds at most 80 lines of code (an inner function counts on its own).
    files: ['lib/engine/**/*.ts', 'lib/flow/**/*.ts', 'db/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true, IIFEs: true }] },
  },
  {
    // Outside db/, no code asks which database it is on (DESIGN: Storage, "One data layer, two
    // dialects"): db/ answers what a caller needs instead — the run mode (lib/flow/run-mode.ts) from
    // queueDatabase and sharedDatabaseUrl, db/command-database.ts for the commands that open the
    // database themselves, db/auth-adapter.ts for better-auth. The simulator's `dialect` is a
    // provider's wire format, not a database.
    files: ['app/**/*.{ts,tsx}', 'components/**/*.{ts,tsx}', 'lib/**/*.{ts,tsx}', 'proxy.ts'],
    ignores: ['**/*.test.{ts,tsx}', 'lib/sim/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[property.name='dialect']",
          message: "Which database this is is db/'s question: ask db/ for what you need (db/command-database.ts, the run mode).",
        },
      ],
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: '@/db/pg',
              importNames: ['isPostgresUrl'],
              message: "Which database a target names is db/'s question: ask db/ for what you need (db/command-database.ts, sharedDatabaseUrl).",
            },
          ],
        },
      ],
    },
  },
  {
    // Components are rendered in the browser (client components) or next to it: never the server-only modules.
    files: ['components/**/*.{ts,tsx}'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { patterns: SERVER_ONLY.map((p) => ({ ...p, allowTypeImports: true })) }],
    },
  },
]);
