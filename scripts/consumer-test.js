#!/usr/bin/env node
// The standing test of what a user meets: tidewater as an npm dependency of their own service.
//
// Packs this repository as npm would publish it, copies examples/orders-service OUTSIDE the
// repository (so nothing resolves through this repo's node_modules or src/), installs the tarball
// there with the service's own dependencies, and runs the service's own `npm test` (strict tsc,
// the sink kit, a DynamoDB Local replay, the Lambda bundle in a fresh process). Run by `npm test`
// after the repository's suite; `node scripts/consumer-test.js --keep` leaves the copy behind.
//
// The copy also checks the docs: scripts/docs-snippets.js writes every TypeScript block of README.md
// and docs/*.md into <copy>/docs-check/ (which the service's tsconfig and vitest config include),
// so the service's `npm test` compiles them against the installed tarball and runs those marked to
// run; blocks of other kinds are checked before anything is installed.
import { spawn, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkDocs, formatSummary } from './docs-snippets.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const example = path.join(root, 'examples', 'orders-service');
const keep = process.argv.includes('--keep');

function run(command, args, cwd) {
  process.stdout.write(`\n$ ${[command, ...args].join(' ')}   (in ${cwd})\n`);
  const result = spawnSync(command, args, {
    cwd,
    stdio: 'inherit',
    env: { ...process.env, npm_config_fund: 'false' },
  });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} exited ${result.status ?? result.signal} in ${cwd}`);
  }
}

/**
 * A new user's first hour, as the README tells it: an empty ESM service installs the tarball,
 * runs `npx tidewater init`, pastes the README's "Replay a stream in a test" block unchanged into
 * its tests, and `npm run typecheck` and `npm test` pass.
 */
function firstHour(work) {
  const fresh = path.join(work, 'fresh-service');
  mkdirSync(fresh);
  writeFileSync(
    path.join(fresh, 'package.json'),
    `${JSON.stringify({ name: 'fresh-service', version: '0.0.0', private: true, type: 'module', dependencies: { tidewater: 'file:../tidewater.tgz' } }, null, 2)}\n`,
  );
  const install = ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'];
  run('npm', install, fresh);
  run('npx', ['tidewater', 'init'], fresh);
  run('npm', install, fresh);
  writeFileSync(
    path.join(fresh, 'test', 'readme-replay.test.ts'),
    readmeBlock('### Replay a stream in a test'),
  );
  run('npm', ['run', 'typecheck'], fresh);
  run('npm', ['test'], fresh);
  process.stdout.write('\nthe first hour (init, then the README replay test pasted unchanged) passed\n');
}

/**
 * A consumer's install is quiet and reproducible (issue 38): every dependency with an install
 * script is allowed or denied by the service's `allowScripts`, as README's Install section shows,
 * so npm 11 warns about none and npm 12 skips none by surprise.
 */
function scriptsReviewed(cwd) {
  const listed = spawnSync('npm', ['install-scripts', 'ls', '--json'], { cwd, encoding: 'utf8' });
  if (listed.status !== 0) throw new Error(`npm install-scripts ls failed in ${cwd}:\n${listed.stderr}`);
  const pending = JSON.parse(listed.stdout).allowScripts ?? [];
  if (pending.length > 0)
    throw new Error(`install scripts not covered by allowScripts: ${JSON.stringify(pending)}`);
}

/** A command that must fail: its exit code and output, for the caller to check what it said. */
function runFailing(command, args, cwd, timeoutMs = 120_000) {
  process.stdout.write(`\n$ ${[command, ...args].join(' ')}   (in ${cwd}; must fail)\n`);
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: timeoutMs });
  const output = `${result.stdout}${result.stderr}`;
  process.stdout.write(output);
  if (result.status === 0) throw new Error(`${command} ${args.join(' ')} succeeded in ${cwd}; it must fail`);
  return output;
}

function expectIn(output, text, what) {
  if (!output.includes(text))
    throw new Error(`${what}: expected the output to contain ${JSON.stringify(text)}`);
}

/**
 * A team's first week (issue 38), on the service firstHour scaffolded, with the CLI of the
 * installed tarball: init in a CommonJS package with its own node16 tsconfig says so and names the
 * fix (and tsc agrees on both counts); a Kinesis function added to serverless.yml makes the
 * scaffold's test say how to give it a Kinesis server; `start --write-env` runs while a misspelled
 * table and function are named with the nearest that exist; once start is gone, its env file is
 * stale and replay fails in seconds naming the endpoint.
 */
async function firstWeek(work) {
  const fresh = path.join(work, 'fresh-service');
  const cli = path.join(fresh, 'node_modules', 'tidewater', 'dist', 'cli', 'bin.js');
  const tsc = path.join(fresh, 'node_modules', 'typescript', 'bin', 'tsc');

  // 1. CommonJS + node16: inside fresh-service, so it resolves fresh-service's installed packages.
  const cjs = path.join(fresh, 'cjs-service');
  mkdirSync(cjs);
  writeFileSync(
    path.join(cjs, 'package.json'),
    '{ "name": "cjs-service", "version": "1.0.0", "type": "commonjs" }\n',
  );
  writeFileSync(
    path.join(cjs, 'tsconfig.json'),
    '{ "compilerOptions": { "module": "node16", "strict": true, "skipLibCheck": true, "noEmit": true, "types": ["node"] }, "include": ["src", "test"] }\n',
  );
  const init = spawnSync(process.execPath, [cli, 'init'], { cwd: cjs, encoding: 'utf8' });
  process.stdout.write(init.stdout + init.stderr);
  if (init.status !== 0) throw new Error('tidewater init failed in a CommonJS package');
  expectIn(init.stdout, 'warning: your tsconfig.json has "module": "node16"', 'init in a CommonJS package');
  expectIn(init.stdout, 'Fix: add "type": "module" to package.json', 'init in a CommonJS package');
  // What the warning says: tsc refuses the scaffold (TS1479) until the package is ESM.
  expectIn(runFailing(process.execPath, [tsc, '-p', '.'], cjs), 'TS1479', 'tsc in the CommonJS package');
  const pkg = JSON.parse(readFileSync(path.join(cjs, 'package.json'), 'utf8'));
  writeFileSync(path.join(cjs, 'package.json'), `${JSON.stringify({ ...pkg, type: 'module' }, null, 2)}\n`);
  run(process.execPath, [tsc, '-p', '.'], cjs);
  rmSync(cjs, { recursive: true, force: true });

  // 2. A Kinesis stream function in the scaffold's serverless.yml: its test says what to give it.
  const config = path.join(fresh, 'serverless.yml');
  const scaffolded = readFileSync(config, 'utf8');
  writeFileSync(
    config,
    scaffolded.replace(
      '\nresources:\n',
      [
        '',
        '  audit:',
        '    handler: src/handlers/archive.handler',
        '    events:',
        '      - stream:',
        '          type: kinesis',
        '          arn:',
        '            Fn::GetAtt: [AuditStream, Arn]',
        '          startingPosition: TRIM_HORIZON',
        '',
        'resources:',
        '  - Resources:',
        '      AuditStream:',
        '        Type: AWS::Kinesis::Stream',
        '        Properties:',
        '          ShardCount: 1',
        '',
      ].join('\n'),
    ),
  );
  const scaffoldTest = runFailing('npx', ['vitest', 'run', 'test/archive.test.ts'], fresh, 300_000);
  expectIn(
    scaffoldTest,
    'no Kinesis server was given: pass `kinesis: localKinesisClient(',
    'the scaffold test',
  );
  writeFileSync(config, scaffolded);

  // 3. start --write-env, and names mistyped on the command line.
  const envFile = path.join(fresh, '.env.local');
  if (!readFileSync(path.join(fresh, '.gitignore'), 'utf8').split('\n').includes('.env.local'))
    throw new Error(".gitignore of a fresh init lacks .env.local, the file start's --write-env writes");
  const start = spawn(process.execPath, [cli, 'start', '--write-env', '.env.local'], { cwd: fresh });
  let log = '';
  start.stderr.on('data', (chunk) => {
    log += chunk;
  });
  const stopped = new Promise((resolve) => start.on('exit', resolve));
  try {
    for (const deadline = Date.now() + 180_000; !existsSync(envFile); ) {
      if (Date.now() > deadline || start.exitCode !== null)
        throw new Error(`start did not write ${envFile}:\n${log}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const table = /RecordsTable\s+table\s+(\S+)/.exec(log)?.[1];
    if (!table) throw new Error(`start named no RecordsTable:\n${log}`);
    const typo = `${table.slice(0, -2)}${table.at(-1)}`;
    const byTable = runFailing(
      process.execPath,
      [cli, 'capture', '--table', typo, '-o', 'never.jsonl', '--local-env', '.env.local'],
      fresh,
    );
    expectIn(byTable, `Did you mean '${table}'?`, 'capture of a misspelled table');
    const byScan = runFailing(
      process.execPath,
      [cli, 'backfill', '--scan', typo, '--local-env', '.env.local'],
      fresh,
    );
    expectIn(byScan, `Did you mean '${table}'?`, 'backfill of a misspelled table');
    const byFunction = runFailing(
      process.execPath,
      [cli, 'capture', '-f', 'archve', '-o', 'never.jsonl', '--local-env', '.env.local'],
      fresh,
    );
    expectIn(byFunction, "Did you mean 'archive'?", 'capture of a misspelled function');
  } finally {
    start.kill('SIGINT');
    await stopped;
  }

  // 4. The env file outlives start: replay names the endpoint that no longer answers, in seconds.
  writeFileSync(path.join(fresh, 'none.jsonl'), '');
  const stale = runFailing(
    process.execPath,
    [cli, 'replay', 'none.jsonl', '--local-env', '.env.local'],
    fresh,
    30_000,
  );
  expectIn(stale, 'EndpointUnreachableError: AWS_ENDPOINT_URL_', 'replay with a stale env file');
  process.stdout.write(
    '\nthe first week (CommonJS init, a Kinesis function, names mistyped, a stale env file) passed\n',
  );
}

/** The first TypeScript block under a README heading, as a reader copies it. */
function readmeBlock(heading) {
  const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
  const at = readme.indexOf(`\n${heading}\n`);
  if (at < 0) throw new Error(`README.md has no heading "${heading}"`);
  const block = /\n```ts\n([\s\S]*?)\n```\n/.exec(readme.slice(at));
  if (!block) throw new Error(`README.md has no ts block under "${heading}"`);
  return `${block[1]}\n`;
}

const work = mkdtempSync(path.join(tmpdir(), 'tidewater-consumer-'));
try {
  if (!existsSync(path.join(root, 'dist', 'index.js'))) run('npm', ['run', 'build'], root);
  const service = path.join(work, 'orders-service');
  cpSync(example, service, {
    recursive: true,
    filter: (source) =>
      !/[\\/](node_modules|\.out|dist|\.tidewater|docs-check|cdk\.out)([\\/]|$)/.test(
        path.relative(example, source),
      ),
  });
  // The docs' code blocks, before anything is installed: a block of an unknown kind, a bad sh
  // command or unparseable YAML fails here; the TypeScript ones go to docs-check/.
  const manifestFile = path.join(service, 'package.json');
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
  const docs = checkDocs({ outDir: path.join(service, 'docs-check'), consumerJson: manifest });
  process.stdout.write(`\n${formatSummary(docs)}\n`);
  // Packages the docs import that the service itself does not use (Powertools, the SQS client…),
  // at the repository's ranges: in this copy only.
  if (Object.keys(docs.add).length > 0) {
    manifest.devDependencies = { ...manifest.devDependencies, ...docs.add };
    writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
    process.stdout.write(`docs-check dependencies added to the copy: ${Object.keys(docs.add).join(', ')}\n`);
  }
  // --ignore-scripts: dist/ is already built (npm test builds first); prepack would build again.
  const packed = spawnSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], {
    cwd: root,
    encoding: 'utf8',
  });
  if (packed.status !== 0) throw new Error(`npm pack failed:\n${packed.stderr}`);
  const [{ filename }] = JSON.parse(packed.stdout);
  // The example depends on "file:../tidewater.tgz": the tarball sits next to the service copy.
  renameSync(path.join(work, path.basename(filename)), path.join(work, 'tidewater.tgz'));

  run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], service);
  scriptsReviewed(service);
  run('npm', ['test'], service);
  firstHour(work);
  await firstWeek(work);
  process.stdout.write(
    `\nconsumer project (${path.relative(root, example)}) passed against the packed tarball\n` +
      `${formatSummary(docs)}\n`,
  );
} catch (error) {
  process.stderr.write(`\nconsumer test failed: ${error.message}\n`);
  process.exitCode = 1;
} finally {
  if (keep) process.stdout.write(`kept: ${work}\n`);
  else rmSync(work, { recursive: true, force: true });
}
