// biome-ignore-all lint/suspicious/noTemplateCurlyInString: serverless variables, not template literals
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { PutRecordCommand } from '@aws-sdk/client-kinesis';
import { afterAll, afterEach, expect, inject, it, vi } from 'vitest';
import { EXIT } from '../../../src/cli/exit-codes.js';
import { main } from '../../../src/cli/program.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../../src/local/servers/dynamodb-local.js';
import {
  createTestKinesisStream,
  createTestTable,
  localClients,
  localKinesis,
  uniqueName,
} from '../../support/aws.js';
import { runCli, startLogName, startOnce } from '../../support/cli-test.js';
import { streamFunctionLines } from '../../support/stream-function-yaml.js';

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
  const records = await jsonLines(out);
  expect(records.map((r) => [r.eventName, r.dynamodb.Keys.pk.S])).toEqual([['INSERT', 'o-1']]);

  // --table takes serverless.yml's logical id as well as a table name.
  const byId = join(dir, 'by-id.jsonl');
  expect(await main(['capture', '-c', file, '--table', 'Orders', '-o', byId])).toBe(EXIT.ok);
  expect(await readFile(byId, 'utf8')).toBe(await readFile(out, 'utf8'));
});

/** A Kinesis stream named as `tidewater start` would have made it, with a record for each of a, b, c (pk). */
async function changeStream(streamName: string): Promise<string> {
  const kinesis = localKinesis();
  try {
    const { streamArn } = await createTestKinesisStream(kinesis, 1, streamName);
    for (const pk of ['a', 'b', 'c'])
      await kinesis.send(
        new PutRecordCommand({
          StreamName: streamName,
          PartitionKey: pk,
          Data: Buffer.from(JSON.stringify({ pk })),
        }),
      );
    return streamArn;
  } finally {
    kinesis.destroy();
  }
}

/** The shell of a user who captures from the run's DynamoDB Local (the endpoints `tidewater start` prints). */
function dynamoShell(): void {
  const endpoint = inject('dynamoEndpoint');
  vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB', endpoint);
  vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB_STREAMS', endpoint);
}

/** The shell of a user who captures from the run's Kinesis server. */
function kinesisShell(): void {
  vi.stubEnv('AWS_ENDPOINT_URL_KINESIS', inject('kinesisEndpoint'));
  vi.stubEnv('AWS_REGION', LOCAL_REGION);
  vi.stubEnv('AWS_ACCESS_KEY_ID', LOCAL_CREDENTIALS.accessKeyId);
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', LOCAL_CREDENTIALS.secretAccessKey);
}

/** The `pk` of each Lambda Kinesis record of a capture file, in file order. */
async function kinesisKeys(file: string): Promise<string[]> {
  return (await jsonLines(file)).map(
    (r) => JSON.parse(Buffer.from(r.kinesis.data, 'base64').toString('utf8')).pk as string,
  );
}

async function jsonLines(file: string) {
  return (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
}

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
  const streamArn = await changeStream(`${name}-local-changes`);
  kinesisShell();

  const byFunction = join(dir, 'by-function.jsonl');
  const run = await runCli(['capture', '-c', file, '-o', byFunction]);
  expect(run.code, run.err).toBe(EXIT.ok);
  expect(await kinesisKeys(byFunction)).toEqual(['a', 'b', 'c']);
  expect((await jsonLines(byFunction)).every((r) => r.eventSourceARN === streamArn)).toBe(true);
  expect(run.out).toContain(`3 records from ${streamArn} written to ${byFunction}`);

  const byArn = join(dir, 'by-arn.jsonl');
  expect(await main(['capture', '--stream-arn', streamArn, '-o', byArn])).toBe(EXIT.ok);
  expect(await readFile(byArn, 'utf8')).toBe(await readFile(byFunction, 'utf8'));
});

it('capture --table <name> in a folder whose serverless.yml cannot be read locally takes the name as given', async () => {
  const { tableName } = await createTestTable(clients.dynamodb);
  await clients.dynamodb.send(new PutItemCommand({ TableName: tableName, Item: { pk: { S: 'o-3' } } }));
  const dir = await mkdtemp(join(tmpdir(), 'tidewater-capture-unreadable-'));
  const file = join(dir, 'serverless.yml');
  // A service name only the deployment can resolve.
  await writeFile(file, ['service: ${ssm:/orders/service-name}', 'provider:', '  name: aws', ''].join('\n'));
  dynamoShell();
  const out = join(dir, 'out.jsonl');
  const run = await runCli(['capture', '-c', file, '--table', tableName, '-o', out]);
  expect(run.code, run.err).toBe(EXIT.ok);
  expect((await jsonLines(out)).map((r) => [r.eventName, r.dynamodb.Keys.pk.S])).toEqual([['INSERT', 'o-3']]);
  // -f needs the file itself: its error names it.
  const byFunction = await runCli(['capture', '-c', file, '-f', 'audit', '-o', join(dir, 'never.jsonl')]);
  expect(byFunction.code).toBe(EXIT.error);
  expect(byFunction.err).toContain(file);
});

it('capture names a misspelled --table or -f, with the nearest that exist', async () => {
  const { tableName } = await createTestTable(clients.dynamodb);
  const dir = await mkdtemp(join(tmpdir(), 'tidewater-capture-typo-'));
  dynamoShell();
  // One letter dropped: not the SDK's "Cannot do operations on a non-existent table".
  const typo = tableName.slice(0, -1);
  const byTable = await runCli(['capture', '--table', typo, '-o', join(dir, 'never.jsonl')]);
  expect(byTable.code).toBe(EXIT.error);
  expect(byTable.err).toContain(
    `NameNotFoundError: --table ${typo}: no such table. Did you mean '${tableName}'?`,
  );
  const file = join(dir, 'serverless.yml');
  await writeFile(
    file,
    ['service: typos', 'provider:', '  name: aws', ...streamFunctionLines('audit'), ''].join('\n'),
  );
  await writeFile(join(dir, 'handler.mjs'), 'export async function handler() {}\n');
  const byFunction = await runCli(['capture', '-c', file, '-f', 'audt', '-o', join(dir, 'never.jsonl')]);
  expect(byFunction.code).toBe(EXIT.error);
  expect(byFunction.err).toMatch(/no function 'audt'.* Did you mean 'audit'\?/);
});

// The orders app as a SAM template and as a CDK app's cdk.out (what start.templates.test.ts runs).
const apps = join(import.meta.dirname, '..', '..', 'fixtures', 'apps');
const SAM = join(apps, 'sam', 'template.yaml');

it.each([
  ['--template', SAM, 'AuditFunction', 'OrdersTable'],
  ['--cdk-out', join(apps, 'cdk.out'), 'AuditFunction5F2E8A0B', 'OrdersTable315BB997'],
])(
  "capture %s reads a function's table stream, or a table's by its logical id, under the name tidewater start gives the table",
  async (flag, app, fn, tableId) => {
    const stage = uniqueName('cap').toLowerCase();
    // The template's table has no TableName: start makes one up, and capture must find that one.
    const log = await startOnce([flag, app, '-f', fn], stage);
    const table = startLogName(log, 'table', new RegExp(tableId));
    await clients.dynamodb.send(new PutItemCommand({ TableName: table, Item: { pk: { S: 'o-1' } } }));
    dynamoShell();
    const dir = await mkdtemp(join(tmpdir(), 'tidewater-capture-template-'));

    const byFunction = join(dir, 'by-function.jsonl');
    const run = await runCli(['capture', flag, app, '--stage', stage, '-f', fn, '-o', byFunction]);
    expect(run.code, run.err).toBe(EXIT.ok);
    expect((await jsonLines(byFunction)).map((r) => [r.eventName, r.dynamodb.Keys.pk.S])).toEqual([
      ['INSERT', 'o-1'],
    ]);
    expect(run.out).toMatch(new RegExp(`^1 records from arn:aws:dynamodb:.*:table/${table}/stream/`));

    const byId = join(dir, 'by-id.jsonl');
    const byTable = await runCli(['capture', flag, app, '--stage', stage, '--table', tableId, '-o', byId]);
    expect(byTable.code, byTable.err).toBe(EXIT.ok);
    expect(await readFile(byId, 'utf8')).toBe(await readFile(byFunction, 'utf8'));
  },
);

it.each([
  ['a Ref to a parameter whose value is the ARN', () => '{ Ref: StreamArnParam }', 'ByRef'],
  ['an ARN written out', (arn: string) => `'${arn}'`, 'Literal'],
])(
  'capture --template of a function whose Stream is %s reads the table the ARN names, as start runs it',
  async (_, stream, fn) => {
    const { tableName } = await createTestTable(clients.dynamodb);
    // Another deployment's account, region and stream label: only the table's name is this one's.
    const arn = `arn:aws:dynamodb:eu-west-1:999999999999:table/${tableName}/stream/2020-01-01T00:00:00.000`;
    const dir = await mkdtemp(join(tmpdir(), 'tidewater-capture-arn-'));
    const template = join(dir, 'template.yaml');
    // The function has no code here and an environment the local servers cannot resolve: capture
    // runs no function, so neither stops it.
    await writeFile(
      template,
      [
        'Transform: AWS::Serverless-2016-10-31',
        'Parameters:',
        '  StreamArnParam:',
        '    Type: String',
        `    Default: '${arn}'`,
        'Resources:',
        '  Orders:',
        '    Type: AWS::DynamoDB::Table',
        '    Properties:',
        `      TableName: ${tableName}`,
        '      BillingMode: PAY_PER_REQUEST',
        '      AttributeDefinitions: [{ AttributeName: pk, AttributeType: S }]',
        '      KeySchema: [{ AttributeName: pk, KeyType: HASH }]',
        '      StreamSpecification: { StreamViewType: NEW_AND_OLD_IMAGES }',
        `  ${fn}:`,
        '    Type: AWS::Serverless::Function',
        '    Properties:',
        '      CodeUri: .',
        '      Handler: fn.handler',
        '      Runtime: nodejs22.x',
        '      Environment:',
        '        Variables:',
        `          SELF: { 'Fn::GetAtt': [${fn}, Arn] }`,
        '      Events:',
        '        Changes:',
        '          Type: DynamoDB',
        '          Properties:',
        `            Stream: ${stream(arn)}`,
        '            StartingPosition: TRIM_HORIZON',
        '',
      ].join('\n'),
    );
    await clients.dynamodb.send(new PutItemCommand({ TableName: tableName, Item: { pk: { S: 'o-2' } } }));
    dynamoShell();
    const out = join(dir, 'out.jsonl');
    const run = await runCli(['capture', '--template', template, '-f', fn, '-o', out]);
    expect(run.code, run.err).toBe(EXIT.ok);
    expect((await jsonLines(out)).map((r) => [r.eventName, r.dynamodb.Keys.pk.S])).toEqual([
      ['INSERT', 'o-2'],
    ]);
    // The local table's own stream, not the ARN as written.
    expect(run.out).toMatch(
      new RegExp(`^1 records from arn:aws:dynamodb:[^:]*:[^:]*:table/${tableName}/stream/`),
    );
    expect(run.out).not.toContain(arn);
  },
);

it.each([
  // Its only stream function, as with serverless.yml.
  [
    '--template',
    join(apps, 'sam-kinesis', 'template.yaml'),
    [],
    (stage: string) => `sam-kinesis-${stage}-ChangeStream`,
  ],
  [
    '--cdk-out',
    join(apps, 'cdk-kinesis.out'),
    ['-f', 'ArchiveFunction9C1D5E3F'],
    (stage: string) => `OrdersKinesisStack-${stage}-ChangeStream4B5C6D7E`,
  ],
])(
  "capture %s of a Kinesis mapping reads the Kinesis stream, by the name start gives the app's stream",
  async (flag, app, fn, streamName) => {
    const stage = uniqueName('kcap').toLowerCase();
    // No Name in the app: `<app>-<stage>-<LogicalId>` (the template's folder, the CDK stack), as
    // start.kinesis.test.ts's log shows.
    const streamArn = await changeStream(streamName(stage));
    kinesisShell();
    const dir = await mkdtemp(join(tmpdir(), 'tidewater-capture-template-'));
    const out = join(dir, 'kinesis.jsonl');
    const run = await runCli(['capture', flag, app, ...fn, '--stage', stage, '-o', out]);
    expect(run.code, run.err).toBe(EXIT.ok);
    expect(await kinesisKeys(out)).toEqual(['a', 'b', 'c']);
    expect(run.out).toContain(`3 records from ${streamArn} written to ${out}`);
  },
);

it.each([
  [
    '-c with --template',
    ['-c', 'serverless.yml', '--template', SAM],
    EXIT.usage,
    "option '--template <file>' cannot be used with option '-c, --config <file>'",
  ],
  [
    '--template with --cdk-out',
    ['--template', SAM, '--cdk-out', join(apps, 'cdk.out')],
    EXIT.usage,
    "option '--template <file>' cannot be used with option '--cdk-out <dir>'",
  ],
  [
    'a --function the template lacks',
    ['--template', SAM, '-f', 'NoSuchFunction'],
    EXIT.error,
    `TemplateReadError: ${SAM}: template: no stream mapping runs a function 'NoSuchFunction' (have ArchiveFunction, AuditFunction)`,
  ],
])('capture with %s is refused before any stream is read', async (_, args, code, message) => {
  const dir = await mkdtemp(join(tmpdir(), 'tidewater-capture-refused-'));
  const out = join(dir, 'never.jsonl');
  const run = await runCli(['capture', ...args, '-o', out]);
  expect(run.code).toBe(code);
  expect(run.err).toContain(message);
  expect(existsSync(out)).toBe(false);
});
