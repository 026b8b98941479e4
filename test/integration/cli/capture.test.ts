// biome-ignore-all lint/suspicious/noTemplateCurlyInString: serverless variables, not template literals
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { CreateStreamCommand, DescribeStreamSummaryCommand, PutRecordCommand } from '@aws-sdk/client-kinesis';
import { afterAll, afterEach, expect, inject, it, vi } from 'vitest';
import { EXIT } from '../../../src/cli/exit-codes.js';
import { main } from '../../../src/cli/program.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../../src/local/servers/dynamodb-local.js';
import { localClients, localKinesis, uniqueName } from '../../support/aws.js';

const clients = localClients();
afterAll(() => clients.dynamodb.destroy());
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  process.exitCode = undefined;
});

/**
 * A service folder: serverless.yml with one stream function (`fn`, handler `<fn>.mjs`, doing
 * nothing) whose event is `event`, and `resources` (YAML lines under Resources:).
 */
async function serviceFolder(prefix: string, fn: string, event: string, resources: string[]) {
  const name = uniqueName(prefix);
  const dir = await mkdtemp(join(tmpdir(), `tidewater-capture-${prefix}-`));
  const file = join(dir, 'serverless.yml');
  const head = [
    `service: ${name}`,
    'provider:',
    '  name: aws',
    'functions:',
    `  ${fn}:`,
    `    handler: ${fn}.handler`,
  ];
  const lines = [
    ...head,
    '    events:',
    `      - stream: ${event}`,
    'resources:',
    '  Resources:',
    ...resources,
    '',
  ];
  await writeFile(file, lines.join('\n'));
  await writeFile(join(dir, `${fn}.mjs`), 'export async function handler() {}\n');
  return { name, dir, file };
}

it("capture in a service folder reads its only stream function's table, by the name serverless.yml gives it", async () => {
  const { name, dir, file } = await serviceFolder(
    'cap',
    'audit',
    '{ type: dynamodb, arn: !GetAtt Orders.StreamArn }',
    [
      '    Orders:',
      '      Type: AWS::DynamoDB::Table',
      '      Properties:',
      '        TableName: ${self:service}-${sls:stage}-orders',
      '        BillingMode: PAY_PER_REQUEST',
      '        AttributeDefinitions: [{ AttributeName: pk, AttributeType: S }]',
      '        KeySchema: [{ AttributeName: pk, KeyType: HASH }]',
      '        StreamSpecification: { StreamViewType: NEW_IMAGE }',
    ],
  );
  vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  // The table, as `tidewater start` creates it on the test run's DynamoDB Local.
  const endpoint = inject('dynamoEndpoint');
  expect(
    await main([
      'start',
      '--once',
      '-c',
      file,
      '--dynamodb-endpoint',
      endpoint,
      '--s3-endpoint',
      inject('s3Endpoint'),
    ]),
  ).toBe(EXIT.ok);
  await clients.dynamodb.send(
    new PutItemCommand({ TableName: `${name}-local-orders`, Item: { pk: { S: 'o-1' } } }),
  );

  // The endpoints `tidewater start` prints, as a user's shell would have them.
  vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB', endpoint);
  vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB_STREAMS', endpoint);
  const out = join(dir, 'orders.jsonl');
  expect(await main(['capture', '-c', file, '-o', out])).toBe(EXIT.ok);
  const records = (await readFile(out, 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  expect(records.map((r) => [r.eventName, r.dynamodb.Keys.pk.S])).toEqual([['INSERT', 'o-1']]);

  // --table takes serverless.yml's logical id as well as a table name.
  const byId = join(dir, 'by-id.jsonl');
  expect(await main(['capture', '-c', file, '--table', 'Orders', '-o', byId])).toBe(EXIT.ok);
  expect(await readFile(byId, 'utf8')).toBe(await readFile(out, 'utf8'));
});

it("capture of a stream: type: kinesis function reads the Kinesis stream serverless.yml names, or --stream-arn's", async () => {
  const { name, dir, file } = await serviceFolder(
    'kcap',
    'archive',
    '{ type: kinesis, arn: !GetAtt Changes.Arn }',
    [
      '    Changes:',
      '      Type: AWS::Kinesis::Stream',
      '      Properties:',
      '        Name: ${self:service}-${sls:stage}-changes',
      '        ShardCount: 1',
    ],
  );
  // The stream as `tidewater start` would have made it, with records a table's destination put there.
  const kinesis = localKinesis();
  const streamName = `${name}-local-changes`;
  await kinesis.send(new CreateStreamCommand({ StreamName: streamName, ShardCount: 1 }));
  for (const pk of ['a', 'b', 'c'])
    await kinesis.send(
      new PutRecordCommand({
        StreamName: streamName,
        PartitionKey: pk,
        Data: Buffer.from(JSON.stringify({ pk })),
      }),
    );
  const { StreamDescriptionSummary } = await kinesis.send(
    new DescribeStreamSummaryCommand({ StreamName: streamName }),
  );
  kinesis.destroy();
  const streamArn = StreamDescriptionSummary?.StreamARN as string;
  const out: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    out.push(String(chunk));
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  vi.stubEnv('AWS_ENDPOINT_URL_KINESIS', inject('kinesisEndpoint'));
  vi.stubEnv('AWS_REGION', LOCAL_REGION);
  vi.stubEnv('AWS_ACCESS_KEY_ID', LOCAL_CREDENTIALS.accessKeyId);
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', LOCAL_CREDENTIALS.secretAccessKey);

  const byFunction = join(dir, 'by-function.jsonl');
  expect(await main(['capture', '-c', file, '-o', byFunction])).toBe(EXIT.ok);
  const records = (await readFile(byFunction, 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  expect(records.map((r) => JSON.parse(Buffer.from(r.kinesis.data, 'base64').toString('utf8')).pk)).toEqual([
    'a',
    'b',
    'c',
  ]);
  expect(records.every((r) => r.eventSourceARN === streamArn)).toBe(true);
  expect(out.join('')).toContain(`3 records from ${streamArn} written to ${byFunction}`);

  const byArn = join(dir, 'by-arn.jsonl');
  expect(await main(['capture', '--stream-arn', streamArn, '-o', byArn])).toBe(EXIT.ok);
  expect(await readFile(byArn, 'utf8')).toBe(await readFile(byFunction, 'utf8'));
});
