import { readFile } from 'node:fs/promises';
import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import { afterAll, afterEach, beforeAll, expect, inject, it, vi } from 'vitest';
import { EXIT } from '../../../src/cli/exit-codes.js';
import { main } from '../../../src/cli/program.js';
import { MemoryFailureDestination, SqsFailureDestination } from '../../../src/local/emulator/destinations.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../../src/local/servers/dynamodb-local.js';
import { S3DeadLetterSink } from '../../../src/sinks/s3-dead-letter-sink.js';
import { SqsDeadLetterSink } from '../../../src/sinks/sqs-dead-letter-sink.js';
import type { DeadLetterEntry } from '../../../src/sinks/types.js';
import { createTestBucket, createTestTable, localClients, startLocalSqs } from '../../support/aws.js';
import { captureOutput } from '../../support/capture-output.js';
import { PACKAGE_ROOT_SOURCE, writeStreamService } from '../../support/cli-test.js';
import { startLambdaServer } from '../redrive/lambda-server.js';
import {
  entryOf,
  fanOut,
  putItems,
  runMapping,
  type StateSink,
  sinkHandler,
  streamRecords,
  tableState,
} from '../redrive/support.js';

const { dynamodb, s3 } = localClients();
let local: Awaited<ReturnType<typeof startLocalSqs>>;
let lambda: Awaited<ReturnType<typeof startLambdaServer>>;
const sink: StateSink = new Map();

beforeAll(async () => {
  local = await startLocalSqs();
  lambda = await startLambdaServer({ orders: async (event) => sinkHandler(sink)(event as never) });
});
afterAll(async () => {
  await Promise.all([local.stop(), lambda.stop()]);
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  process.exitCode = undefined;
});

it('tidewater redrive --dry-run prints the range; --invoke redrives through the deployed function and exits 0', async () => {
  // The command builds its clients from the environment, as it would against AWS.
  vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB_STREAMS', inject('dynamoEndpoint'));
  vi.stubEnv('AWS_ENDPOINT_URL_SQS', local.server.endpoint);
  vi.stubEnv('AWS_ENDPOINT_URL_LAMBDA', lambda.endpoint);
  vi.stubEnv('AWS_REGION', LOCAL_REGION);
  vi.stubEnv('AWS_ACCESS_KEY_ID', LOCAL_CREDENTIALS.accessKeyId);
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', LOCAL_CREDENTIALS.secretAccessKey);
  const table = await createTestTable(dynamodb);
  await putItems(table.tableName, ['c1', 'c2']);
  const queueName = `cli-${table.tableName}`;
  const { QueueUrl } = await local.sqs.send(new CreateQueueCommand({ QueueName: queueName }));
  const memory = new MemoryFailureDestination();
  await runMapping(
    table.streamArn,
    sinkHandler(new Map(), { failAt: new Set(['c2']) }),
    fanOut(memory, new SqsFailureDestination(local.sqs, QueueUrl as string)),
  );
  const info = memory.records[0]?.DDBStreamBatchInfo;
  const args = [
    'redrive',
    '--stream-arn',
    table.streamArn,
    '--queue-url',
    QueueUrl as string,
    '--invoke',
    'orders',
  ];

  const dry = captureOutput();
  expect(await main([...args, '--dry-run'])).toBe(EXIT.ok);
  expect(dry.out.join('')).toContain(`would redrive sqs:`);
  expect(dry.out.join('')).toContain(`${info?.startSequenceNumber}..${info?.endSequenceNumber}`);
  expect(lambda.invoked).toHaveLength(0);
  vi.restoreAllMocks();

  const real = captureOutput();
  expect(await main(args)).toBe(EXIT.ok);
  expect(real.out.join('')).toContain(
    '1 messages read, 2 records redriven, 2 succeeded, 0 failed, 1 messages removed',
  );
  // Progress goes to stderr, one line per message, so stdout stays the report.
  expect(real.err.join('')).toContain('redrive: 1 messages read, 2 records, 2 succeeded, 0 failed, 0 kept');
  vi.restoreAllMocks();

  // The queue is empty now: nothing done is said, with its own exit code.
  const empty = captureOutput();
  expect(await main(args)).toBe(EXIT.nothingFound);
  expect(empty.err.join('')).toContain('nothing to redrive');
  expect(local.server.messages(queueName)).toHaveLength(0);
  expect(sink).toEqual(await tableState(table.tableName));
});

it('tidewater redrive without a source is a usage error', async () => {
  captureOutput();
  expect(await main(['redrive', '--stream-arn', 'arn:x', '--invoke', 'orders'])).toBe(EXIT.usage);
});

/**
 * A service whose stream function is configured as archiveTtl is (its dead-letter queue, the
 * overflow bucket and prefix); its handler appends each record's keys to `out`.
 */
function deadLetterService(environment: Record<string, string>) {
  return writeStreamService({
    name: 'archive',
    environment,
    handler: () =>
      [
        "import { appendFileSync } from 'node:fs';",
        `import { createStreamHandler } from ${JSON.stringify(PACKAGE_ROOT_SOURCE)};`,
        'const sink = { name: "out", write(records) {',
        '  for (const r of records) appendFileSync(process.env.OUT_FILE, JSON.stringify(r.raw.dynamodb.Keys) + "\\n");',
        '} };',
        "export const handler = createStreamHandler({ routes: [{ when: 'insert', to: sink }], metrics: false });",
      ].join('\n'),
  });
}

/** Two dead-letter entries too large for a 100-byte message in a fresh queue: each a pointer to its copy under overflow/. */
async function pointerQueue() {
  // A handler target reaches DynamoDB and S3 too: every service the command uses has a local endpoint.
  vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB', inject('dynamoEndpoint'));
  vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB_STREAMS', inject('dynamoEndpoint'));
  vi.stubEnv('AWS_ENDPOINT_URL_SQS', local.server.endpoint);
  vi.stubEnv('AWS_ENDPOINT_URL_S3', inject('s3Endpoint'));
  vi.stubEnv('AWS_S3_FORCE_PATH_STYLE', 'true');
  vi.stubEnv('AWS_REGION', LOCAL_REGION);
  vi.stubEnv('AWS_ACCESS_KEY_ID', LOCAL_CREDENTIALS.accessKeyId);
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', LOCAL_CREDENTIALS.secretAccessKey);
  const { table, records } = await streamRecords(['p1', 'p2']);
  const bucket = await createTestBucket(s3);
  const { QueueUrl } = await local.sqs.send(new CreateQueueCommand({ QueueName: `ptr-${table.tableName}` }));
  const queueUrl = QueueUrl as string;
  const overflow = new S3DeadLetterSink({ bucket, client: s3, prefix: 'overflow/' });
  await new SqsDeadLetterSink({ queueUrl, client: local.sqs, overflow, maxMessageBytes: 100 }).send(
    records.map((r) => entryOf(r, table.streamArn)) as DeadLetterEntry[],
    {},
  );
  const args = (config: string) => [
    'redrive',
    '-c',
    config,
    '-f',
    'archive',
    '--stream-arn',
    table.streamArn,
    '--queue-url',
    queueUrl,
  ];
  return { table, bucket, queueUrl, args };
}

it("tidewater redrive -f takes the pointer bucket and prefix from the function's dead-letter settings when no flag gives them", async () => {
  const { table, bucket, queueUrl, args } = await pointerQueue();
  const svc = await deadLetterService({
    ARCHIVE_BUCKET: bucket,
    TTL_ATTRIBUTE: 'expiresAt',
    DEAD_LETTER_QUEUE_URL: queueUrl,
    DEAD_LETTER_OVERFLOW_PREFIX: 'overflow/',
  });
  const run = captureOutput();
  expect(await main(args(svc.config))).toBe(EXIT.ok);
  expect(run.out.join('')).toContain(
    '2 messages read, 2 records redriven, 2 succeeded, 0 failed, 2 messages removed',
  );
  expect(run.err.join('')).toContain("dead-letter pointers followed into archive's ARCHIVE_BUCKET");
  // No environment value in the log line.
  expect(run.err.join('')).not.toContain(bucket);
  const keys = (await readFile(svc.out, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l).pk.S);
  expect(keys.sort()).toEqual(['p1', 'p2']);
  await table.drop();
});

it('tidewater redrive -f: a flag wins over the settings, and settings that do not read leave pointers refused, naming the variable only', async () => {
  const { table, bucket, queueUrl, args } = await pointerQueue();
  // The settings say another prefix; --pointer-prefix overflow/ (in --pointer-bucket) is what counts.
  const elsewhere = await deadLetterService({
    ARCHIVE_BUCKET: `${bucket}-other`,
    DEAD_LETTER_QUEUE_URL: queueUrl,
    DEAD_LETTER_OVERFLOW_PREFIX: 'elsewhere/',
  });
  const bad = await deadLetterService({
    ARCHIVE_BUCKET: bucket,
    DEAD_LETTER_QUEUE_URL: queueUrl,
    DEAD_LETTER_OVERFLOW_PREFIX: '/secret-prefix',
  });
  const refused = captureOutput();
  expect(await main(args(bad.config))).toBe(EXIT.incomplete);
  expect(refused.err.join('')).toContain(
    "warning: archive's dead-letter overflow cannot be read (DEAD_LETTER_OVERFLOW_PREFIX)",
  );
  expect(refused.err.join('')).not.toContain('secret-prefix');
  expect(local.server.messages(`ptr-${table.tableName}`)).toHaveLength(2);
  vi.restoreAllMocks();

  const flagged = captureOutput();
  expect(
    await main([...args(elsewhere.config), '--pointer-bucket', bucket, '--pointer-prefix', 'overflow/']),
  ).toBe(EXIT.ok);
  expect(flagged.out.join('')).toContain('2 succeeded, 0 failed, 2 messages removed');
  expect(flagged.err.join('')).not.toContain('dead-letter pointers followed into');
  await table.drop();
});
