#!/usr/bin/env node
// The standing test of what a user meets: tidewater as an npm dependency of their own service.
//
// Packs this repository as npm would publish it, copies examples/orders-service OUTSIDE the
// repository (so nothing resolves through this repo's node_modules or src/), installs the tarball
// there with the service's own dependencies, and runs the service's own `npm test` (strict tsc,
// the sink kit, a DynamoDB Local replay, the Lambda bundle in a fresh process). Run by `npm test`
// after the repository's suite; `node scripts/consumer-test.js --keep` leaves the copy behind.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

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

const work = mkdtempSync(path.join(tmpdir(), 'tidewater-consumer-'));
try {
  if (!existsSync(path.join(root, 'dist', 'index.js'))) run('npm', ['run', 'build'], root);
  // --ignore-scripts: dist/ is already built (npm test builds first); prepack would build again.
  const packed = spawnSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], {
    cwd: root,
    encoding: 'utf8',
  });
  if (packed.status !== 0) throw new Error(`npm pack failed:\n${packed.stderr}`);
  const [{ filename }] = JSON.parse(packed.stdout);
  // The example depends on "file:../tidewater.tgz": the tarball sits next to the service copy.
  renameSync(path.join(work, path.basename(filename)), path.join(work, 'tidewater.tgz'));

  const service = path.join(work, 'orders-service');
  cpSync(example, service, {
    recursive: true,
    filter: (source) =>
      !/[\\/](node_modules|\.out|dist|\.tidewater)([\\/]|$)/.test(path.relative(example, source)),
  });
  run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], service);
  run('npm', ['test'], service);
  process.stdout.write(
    `\nconsumer project (${path.relative(root, example)}) passed against the packed tarball\n`,
  );
} catch (error) {
  process.stderr.write(`\nconsumer test failed: ${error.message}\n`);
  process.exitCode = 1;
} finally {
  if (keep) process.stdout.write(`kept: ${work}\n`);
  else rmSync(work, { recursive: true, force: true });
}
