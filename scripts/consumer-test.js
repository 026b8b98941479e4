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
import { spawnSync } from 'node:child_process';
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
