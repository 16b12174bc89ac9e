import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

// Imports go one way: src/ ships and imports no stand-in; dev/ (simulator, dev stack) imports only src/.
const shipsNoStandIns = {
  group: ['**/dev/*', '**/dev', '**/test/*', '**/bench/*', '**/chaos/*', '**/scripts/*'],
  message:
    'src/ ships: it must not import the stand-ins in dev/ or the tooling in test/, bench/, chaos/, scripts/.',
};
const devImportsOnlySrc = {
  group: ['**/test/*', '**/bench/*', '**/chaos/*', '**/scripts/*'],
  message: 'dev/ is imported by test/, bench/, chaos/ and scripts/, never the other way round.',
};

// test/ runs everything (it may import bench/ and chaos/ to run their quick modes); nothing imports test/.
const toolsImportNoTests = {
  group: ['**/test/*'],
  message: 'test/ imports the tools it tests; bench/, chaos/ and scripts/ never import test/.',
};

// Inside src/, imports run downhill: contract/ is the bottom (pure declarations every layer shares), activities/
// never run workflow code, and workflow code (Temporal's sandbox) runs only contract/ and itself.
const contractImportsNothingElse = {
  regex: '^\\.\\./',
  message: 'src/contract/ is the bottom layer: it imports nothing else in src/.',
};
const activitiesRunNoWorkflowCode = {
  regex: '(^|/)workflows(/|$)',
  allowTypeImports: true,
  message: 'Activities never import workflow code at run time: move what both need into src/contract/.',
};
/** Workflow files `depth` folders below src/: only contract/ (and workflow code) at run time; types of the rest. */
const workflowsRunOnlyContract = (depth) => ({
  regex: `^(\\.\\./){${depth}}(?!contract/)`,
  allowTypeImports: true,
  message:
    'Workflow code imports only src/contract/ at run time (and the types of activities): move shared code there.',
});

/** Workflow code runs in Temporal's deterministic sandbox: no Node built-ins, no I/O, no HTTP. */
const workflowImportRules = (depth) => ({
  'no-restricted-imports': [
    'error',
    {
      paths: [
        ...nodeBuiltins.map((name) => ({
          name,
          message: 'Node built-ins are not allowed in workflow code.',
        })),
        { name: 'undici', message: 'HTTP belongs in activities.' },
        { name: '@temporalio/activity', message: 'Activity APIs are not available in workflow code.' },
        { name: '@temporalio/client', message: 'Use @temporalio/workflow APIs in workflow code.' },
        { name: '@temporalio/worker', message: 'Worker APIs are not available in workflow code.' },
      ],
      patterns: [shipsNoStandIns, workflowsRunOnlyContract(depth)],
    },
  ],
});

export default tseslint.config(
  { ignores: ['dist/', 'packages/client/dist/', 'node_modules/', 'exports/', '.temporal-dev/', '.tmp/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            {
              from: 'package',
              package: 'node:test',
              name: ['test', 'describe', 'it', 'suite', 'before', 'after'],
            },
          ],
        },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/workflows/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [shipsNoStandIns] }] },
  },
  {
    files: ['dev/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [devImportsOnlySrc] }] },
  },
  {
    files: ['bench/**/*.ts', 'chaos/**/*.ts', 'scripts/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [toolsImportNoTests] }] },
  },
  {
    files: ['src/contract/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [shipsNoStandIns, contractImportsNothingElse] }],
    },
  },
  {
    files: ['src/activities/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [shipsNoStandIns, activitiesRunNoWorkflowCode] }],
    },
  },
  { files: ['src/workflows/*.ts'], rules: workflowImportRules(1) },
  { files: ['src/workflows/*/**/*.ts'], rules: workflowImportRules(2) },
  {
    files: ['src/workflows/**/*.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        { name: 'setTimeout', message: 'Use sleep() from @temporalio/workflow.' },
        { name: 'setInterval', message: 'Use sleep() in a loop.' },
        { name: 'process', message: 'No process access in workflow code.' },
        { name: 'fetch', message: 'HTTP belongs in activities.' },
      ],
    },
  },
  {
    // Tests pass activity functions to MockActivityEnvironment.run; they never use `this`.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/unbound-method': 'off' },
  },
  {
    files: ['**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
);
