import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, expect, inject, vi } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { main } from '../../src/cli/program.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../src/local/servers/dynamodb-local.js';
import { localClients } from './aws.js';
import { captureOutput } from './capture-output.js';

/**
 * For a test file that runs the CLI's `main` in process: the local servers' clients (destroyed
 * after the file), and after each test the spied stdout/stderr restored and the exit code main
 * set cleared, so one test's failure code does not fail the run.
 */
export function cliTestClients(): ReturnType<typeof localClients> {
  const clients = localClients();
  afterAll(() => {
    clients.dynamodb.destroy();
    clients.streams.destroy();
    clients.s3.destroy();
  });
  afterEach(() => {
    vi.restoreAllMocks();
    process.exitCode = undefined;
  });
  return clients;
}

/**
 * The CLI's `main` run in process with stdout and stderr captured (and restored after, whatever
 * happens): its exit code and what it wrote to each.
 */
export async function runCli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const { out, err } = captureOutput();
  try {
    const code = await main(args);
    return { code, out: out.join(''), err: err.join('') };
  } finally {
    vi.restoreAllMocks();
  }
}

/**
 * `tidewater start --once` of an app (`-c`, `--template` or `--cdk-out` and its path) on the
 * run's DynamoDB Local and S3 server, which must succeed: what it logged (stderr).
 */
export async function startOnce(app: readonly string[], stage: string): Promise<string> {
  const endpoints = ['--dynamodb-endpoint', inject('dynamoEndpoint'), '--s3-endpoint', inject('s3Endpoint')];
  const { code, err } = await runCli(['start', '--once', ...app, '--stage', stage, ...endpoints]);
  expect(code, err).toBe(EXIT.ok);
  return err;
}

/**
 * A `--local-env` file in `dir` pointing at the run's DynamoDB Local and S3 server, as
 * `tidewater start --env-file` writes one for `replay` to read.
 */
export async function localEnvFile(dir: string): Promise<string> {
  const file = join(dir, 'local.env');
  await writeFile(
    file,
    [
      `AWS_ENDPOINT_URL_DYNAMODB=${inject('dynamoEndpoint')}`,
      `AWS_ENDPOINT_URL_S3=${inject('s3Endpoint')}`,
      `AWS_REGION=${LOCAL_REGION}`,
      `AWS_ACCESS_KEY_ID=${LOCAL_CREDENTIALS.accessKeyId}`,
      `AWS_SECRET_ACCESS_KEY=${LOCAL_CREDENTIALS.secretAccessKey}`,
      'AWS_S3_FORCE_PATH_STYLE=true',
      '',
    ].join('\n'),
  );
  return file;
}

/** The name a `tidewater start` log gives a resource: `  <LogicalId>   table  <name> (…)`. */
export function startLogName(log: string, kind: 'table' | 'bucket', logicalId: RegExp): string {
  const line = log
    .split('\n')
    .find((l) => new RegExp(`^tidewater:\\s+${logicalId.source}\\s+${kind}\\s`).test(l));
  const name = line?.trim().split(/\s+/)[3];
  if (!name) throw new Error(`no ${kind} ${logicalId} in:\n${log}`);
  return name;
}

/** The package's root entry as a generated handler module imports it. */
export const PACKAGE_ROOT_SOURCE = resolve('src/index.js');

/**
 * A service in a fresh folder: serverless.yml with one function `name` (a DynamoDB stream event;
 * `environment` and OUT_FILE, the folder's out.jsonl, as its own variables) and handler.mjs, the
 * module `handler` writes for that file.
 */
export async function writeStreamService(options: {
  name: string;
  environment?: Readonly<Record<string, string>>;
  handler: (out: string) => string;
}): Promise<{ dir: string; config: string; out: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'tidewater-cli-service-'));
  const out = join(dir, 'out.jsonl');
  const environment = { OUT_FILE: out, ...options.environment };
  await writeFile(
    join(dir, 'serverless.yml'),
    [
      'service: seeded',
      'provider:',
      '  name: aws',
      'functions:',
      `  ${options.name}:`,
      '    handler: handler.handler',
      '    environment:',
      ...Object.entries(environment).map(([name, value]) => `      ${name}: ${JSON.stringify(value)}`),
      '    events:',
      '      - stream:',
      '          arn: arn:aws:dynamodb:us-east-1:123456789012:table/t/stream/2026-01-01T00:00:00.000',
      '',
    ].join('\n'),
  );
  await writeFile(join(dir, 'handler.mjs'), options.handler(out));
  return { dir, config: join(dir, 'serverless.yml'), out };
}
