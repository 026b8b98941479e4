// biome-ignore-all lint/suspicious/noTemplateCurlyInString: serverless variables and generated TypeScript, not template literals
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  PutItemCommand,
} from '@aws-sdk/client-dynamodb';
import { HeadBucketCommand } from '@aws-sdk/client-s3';
import { describe, expect, inject, it, onTestFinished, vi } from 'vitest';
import { EXIT } from '../../../src/cli/exit-codes.js';
import { main } from '../../../src/cli/program.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../../src/local/servers/dynamodb-local.js';
import { uniqueName } from '../../support/aws.js';
import { cliTestClients } from '../../support/cli-test.js';
import { listeningAddresses, listensOnLoopbackOnly } from '../../support/listening.js';

const clients = cliTestClients();

interface Seen {
  at: 'import' | 'invoke';
  env: {
    ARCHIVE_BUCKET: string | null;
    TABLE_NAME: string | null;
    LOG_LEVEL: string | null;
    S3: string | null;
  };
  records?: { eventName: string; pk: string }[];
}

/**
 * A user's service in its own folder: serverless.yml with a table (stream + TTL) and a bucket
 * under resources:, provider and function environments, and a stream function whose handler
 * records what it is given.
 */
async function service(name: string): Promise<{ file: string; seen: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'tidewater-start-service-'));
  const seen = join(dir, 'seen.jsonl');
  await writeFile(
    join(dir, 'serverless.yml'),
    [
      `service: ${name}`,
      'provider:',
      '  name: aws',
      '  environment:',
      '    LOG_LEVEL: debug',
      'functions:',
      '  recorder:',
      '    handler: src/recorder.handler',
      '    environment:',
      '      ARCHIVE_BUCKET: !Ref Archive',
      '      TABLE_NAME:',
      '        Ref: Items',
      '    events:',
      '      - stream:',
      '          type: dynamodb',
      '          arn: !GetAtt Items.StreamArn',
      '          batchSize: 10',
      '          maximumRetryAttempts: 2',
      '          functionResponseType: ReportBatchItemFailures',
      '          filterPatterns:',
      '            - eventName: [INSERT]',
      'resources:',
      '  Resources:',
      '    Items:',
      '      Type: AWS::DynamoDB::Table',
      '      Properties:',
      // No TableName: CloudFormation would generate one; locally it is <service>-<stage>-<LogicalId>.
      '        BillingMode: PAY_PER_REQUEST',
      '        AttributeDefinitions: [{ AttributeName: pk, AttributeType: S }]',
      '        KeySchema: [{ AttributeName: pk, KeyType: HASH }]',
      '        StreamSpecification: { StreamViewType: NEW_AND_OLD_IMAGES }',
      '        TimeToLiveSpecification: { AttributeName: expiresAt, Enabled: true }',
      '    Archive:',
      '      Type: AWS::S3::Bucket',
      '      Properties:',
      '        BucketEncryption:',
      '          ServerSideEncryptionConfiguration:',
      '            - ServerSideEncryptionByDefault: { SSEAlgorithm: AES256 }',
      '',
    ].join('\n'),
  );
  await mkdir(join(dir, 'src'));
  const pick =
    '({ ARCHIVE_BUCKET: process.env.ARCHIVE_BUCKET ?? null, TABLE_NAME: process.env.TABLE_NAME ?? null, ' +
    'LOG_LEVEL: process.env.LOG_LEVEL ?? null, S3: process.env.AWS_ENDPOINT_URL_S3 ?? null })';
  await writeFile(
    join(dir, 'src', 'recorder.mjs'),
    `import { appendFileSync } from 'node:fs';
appendFileSync(${JSON.stringify(seen)}, JSON.stringify({ at: 'import', env: ${pick} }) + '\\n');
export async function handler(event) {
  const records = event.Records.map((r) => ({ eventName: r.eventName, pk: r.dynamodb.Keys.pk.S }));
  appendFileSync(${JSON.stringify(seen)}, JSON.stringify({ at: 'invoke', env: ${pick}, records }) + '\\n');
  return { batchItemFailures: [] };
}
`,
  );
  return { file: join(dir, 'serverless.yml'), seen };
}

/**
 * The recorder's complete lines. Read while `start` runs, the file may end in a line the handler
 * is still appending (no newline yet): that one is left for the next read, not parsed half-written.
 */
async function seenLines(file: string): Promise<Seen[]> {
  if (!existsSync(file)) return [];
  const lines = (await readFile(file, 'utf8')).split('\n');
  lines.pop();
  return lines.map((line) => JSON.parse(line) as Seen);
}

function captureStderr(): string[] {
  const err: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    err.push(String(chunk));
    return true;
  });
  return err;
}

describe('tidewater start in a service folder', () => {
  it("--once creates serverless.yml's resources and delivers the stream to the handler with its environment", async () => {
    const name = uniqueName('svc');
    const { file, seen } = await service(name);
    const endpoints = [
      '--dynamodb-endpoint',
      inject('dynamoEndpoint'),
      '--s3-endpoint',
      inject('s3Endpoint'),
    ];
    const saved = { ...process.env };

    // First run: the resources are created; the new table's stream holds nothing yet.
    let err = captureStderr();
    expect(await main(['start', '--once', '-c', file, ...endpoints])).toBe(EXIT.ok);
    const table = `${name}-local-Items`;
    const bucket = `${name}-local-archive`.toLowerCase();
    expect(err.join('')).toContain(`Items                    table  ${table} (stream, TTL on expiresAt)`);
    expect(err.join('')).toContain('deployed but not emulated locally: Archive.BucketEncryption');
    expect(err.join('')).toMatch(/export AWS_ENDPOINT_URL_DYNAMODB=http:\/\/127\.0\.0\.1:\d+/);
    const described = await clients.dynamodb.send(new DescribeTableCommand({ TableName: table }));
    expect(described.Table?.StreamSpecification?.StreamViewType).toBe('NEW_AND_OLD_IMAGES');
    const ttl = await clients.dynamodb.send(new DescribeTimeToLiveCommand({ TableName: table }));
    expect(ttl.TimeToLiveDescription?.AttributeName).toBe('expiresAt');
    await expect(clients.s3.send(new HeadBucketCommand({ Bucket: bucket }))).resolves.toBeDefined();
    // Loaded (with its environment), never invoked: nothing was written.
    expect((await seenLines(seen)).map((s) => s.at)).toEqual(['import']);

    // Items written to the table; the second run finds the resources and delivers the stream.
    for (const pk of ['a', 'b'])
      await clients.dynamodb.send(new PutItemCommand({ TableName: table, Item: { pk: { S: pk } } }));
    vi.restoreAllMocks();
    err = captureStderr();
    expect(await main(['start', '--once', '-c', file, ...endpoints])).toBe(EXIT.ok);
    expect(err.join('')).toMatch(/recorder: 2 records → success/);
    const env = { ARCHIVE_BUCKET: bucket, TABLE_NAME: table, LOG_LEVEL: 'debug', S3: inject('s3Endpoint') };
    expect(await seenLines(seen)).toEqual([
      { at: 'import', env },
      { at: 'import', env },
      {
        at: 'invoke',
        env,
        records: [
          { eventName: 'INSERT', pk: 'a' },
          { eventName: 'INSERT', pk: 'b' },
        ],
      },
    ]);
    // The process's environment is as it was.
    expect(process.env).toEqual(saved);
  });

  it('runs until SIGTERM with its own servers, delivering what is written meanwhile, and shuts down cleanly', async () => {
    const name = uniqueName('svc');
    const { file, seen } = await service(name);
    const envFile = join(await mkdtemp(join(tmpdir(), 'tidewater-start-env-')), 'local.env');
    const bin = join(process.cwd(), 'src', 'cli', 'bin.ts');
    const child = spawn(
      process.execPath,
      ['--import', import.meta.resolve('tsx'), bin, 'start', '-c', file, '--write-env', envFile],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    onTestFinished(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));

    // Ready once the environment file is written; a bound turns "never" into a clear failure.
    const until = async (condition: () => Promise<boolean>, what: string) => {
      for (const deadline = Date.now() + 120_000; !(await condition()); ) {
        if (child.exitCode !== null)
          throw new Error(`start exited ${child.exitCode} before ${what}:\n${stderr}`);
        if (Date.now() > deadline) throw new Error(`no ${what}:\n${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };
    // The file exists from the moment writeFile opens it, before its content is written: wait for
    // the lines this test reads, complete, not for the file.
    let envText = '';
    await until(async () => {
      envText = existsSync(envFile) ? await readFile(envFile, 'utf8') : '';
      return (
        envText.endsWith('\n') &&
        envText.includes('AWS_ENDPOINT_URL_DYNAMODB=') &&
        envText.includes('AWS_ENDPOINT_URL_S3=')
      );
    }, 'environment file');
    const env = Object.fromEntries(
      envText
        .trim()
        .split('\n')
        .map((line) => line.split(/=(.*)/s).slice(0, 2) as [string, string]),
    );
    expect(env.AWS_ENDPOINT_URL_DYNAMODB).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await stat(envFile)).mode & 0o777).toBe(0o600);
    // start's own servers, DynamoDB Local included, listen on loopback only.
    for (const name of ['AWS_ENDPOINT_URL_DYNAMODB', 'AWS_ENDPOINT_URL_S3', 'AWS_ENDPOINT_URL_SQS']) {
      const port = Number(new URL(env[name] as string).port);
      expect(listensOnLoopbackOnly(port), `${name}: ${listeningAddresses(port).join()}`).toBe(true);
    }
    expect(env.AWS_ENDPOINT_URL_DYNAMODB).not.toBe(inject('dynamoEndpoint'));
    const dynamodb = new DynamoDBClient({
      endpoint: env.AWS_ENDPOINT_URL_DYNAMODB,
      region: LOCAL_REGION,
      credentials: LOCAL_CREDENTIALS,
    });
    onTestFinished(() => dynamodb.destroy());
    await dynamodb.send(
      new PutItemCommand({ TableName: `${name}-local-Items`, Item: { pk: { S: 'live' } } }),
    );
    await until(async () => (await seenLines(seen)).some((s) => s.at === 'invoke'), 'invocation');

    child.kill('SIGTERM');
    expect(await exited).toBe(EXIT.ok);
    expect(stderr).toMatch(/SIGTERM, stopping/);
    expect(stderr).toMatch(/stopped: 1 invocation, 0 records discarded/);
    const invoked = (await seenLines(seen)).filter((s) => s.at === 'invoke');
    expect(invoked.map((s) => s.records)).toEqual([[{ eventName: 'INSERT', pk: 'live' }]]);
    expect(invoked[0]?.env.S3).toBe(env.AWS_ENDPOINT_URL_S3);
    // A process of its own starting DynamoDB Local (a JVM), s3rver and the SQS server: ~10 s idle,
    // ~36 s with the cores busy. The timeout, like the waits above, only catches a hang.
  }, 300_000);
});
