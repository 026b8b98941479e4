import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import { afterAll, afterEach, beforeAll, expect, inject, it, vi } from 'vitest';
import { EXIT } from '../../../src/cli/exit-codes.js';
import { main } from '../../../src/cli/program.js';
import { MemoryFailureDestination, SqsFailureDestination } from '../../../src/local/emulator/destinations.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../../src/local/servers/dynamodb-local.js';
import { createTestTable, localClients, startLocalSqs } from '../../support/aws.js';
import { captureOutput } from '../../support/capture-output.js';
import { startLambdaServer } from '../redrive/lambda-server.js';
import { fanOut, putItems, runMapping, type StateSink, sinkHandler, tableState } from '../redrive/support.js';

const { dynamodb } = localClients();
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
