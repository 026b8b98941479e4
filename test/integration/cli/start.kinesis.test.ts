import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../../src/cli/exit-codes.js';
import { uniqueName } from '../../support/aws.js';
import { cliTestClients, runCli, startLogName, startOnce } from '../../support/cli-test.js';
import {
  archivedOrders,
  awaitTtlSweep,
  EXPIRED_ORDERS,
  ordersExpiredUnderStart,
  writeOrders,
} from '../../support/ttl-orders.js';

// The orders app with its archive fed by the table's DynamoDB stream (../serverless) and by the
// table's Kinesis streaming destination, described three ways: serverless.yml's `stream: type:
// kinesis` event (../serverless-kinesis), a SAM Kinesis event (../sam-kinesis), and a CDK app's
// AWS::Lambda::EventSourceMapping on an AWS::Kinesis::Stream (../cdk-kinesis.out). `tidewater
// start --once` runs each on the same local servers, the Kinesis ones with their own Kinesis
// server, the bridge and the Kinesis mapping.
const fixtures = join(import.meta.dirname, '..', '..', 'fixtures', 'apps');
const root = join(import.meta.dirname, '..', '..', '..');
const KINESIS_CONFIG = join(fixtures, 'serverless-kinesis', 'serverless.yml');
const APPS = [
  { tool: 'serverless.yml', flag: ['-c', join(fixtures, 'serverless', 'serverless.yml')] },
  { tool: 'serverless.yml, kinesis', flag: ['-c', KINESIS_CONFIG], kinesis: 'archive' },
  {
    tool: 'SAM, Kinesis event',
    flag: ['--template', join(fixtures, 'sam-kinesis', 'template.yaml')],
    kinesis: 'ArchiveFunction',
  },
  {
    tool: 'CDK, Kinesis mapping',
    flag: ['--cdk-out', join(fixtures, 'cdk-kinesis.out')],
    kinesis: 'ArchiveFunction9C1D5E3F',
  },
] as const;

const clients = cliTestClients();

/** A start with tidewater's own settings (infra/settings.yml reads them from the environment). */
async function startWith(env: Record<string, string>, flag: readonly string[], stage: string) {
  const saved = Object.fromEntries(Object.keys(env).map((name) => [name, process.env[name]]));
  Object.assign(process.env, env);
  try {
    return await startOnce(flag, stage);
  } finally {
    for (const [name, value] of Object.entries(saved))
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
  }
}

describe('tidewater start --once with a Kinesis mapping', () => {
  it("archives TTL deletes through the table's Kinesis streaming destination as the DynamoDB stream path does, from serverless.yml, SAM and CDK", async () => {
    const stage = uniqueName('k').toLowerCase();
    const now = Math.floor(Date.now() / 1000);
    const apps = await ordersExpiredUnderStart(clients.dynamodb, APPS, {
      stage,
      now,
      async check(app, log, table) {
        if (!('kinesis' in app)) return;
        // The template has no StreamSpecification: the bridge's DynamoDB stream is enabled locally.
        expect(log).toContain('(stream, Kinesis streaming destination, TTL on expiresAt)');
        expect(log).toMatch(/ChangeStream\w*\s+Kinesis stream [\w-]+-ChangeStream\w*/);
        expect(log).toMatch(/deployed but not emulated locally: .*ChangeStream\w*\.StreamEncryption/);
        // The mapping's settings as each tool states them, read into the one Kinesis mapping.
        expect(log).toMatch(
          new RegExp(
            `function ${app.kinesis} \\(.*\\) ← arn:aws:kinesis:us-east-1:\\d{12}:stream/[\\w-]+-ChangeStream\\w*\\n.*` +
              'batch 10, 1 filter pattern, ReportBatchItemFailures, bisect, retries 2, from TRIM_HORIZON; on failure: queue ',
          ),
        );
        const described = await clients.dynamodb.send(new DescribeTableCommand({ TableName: table }));
        expect(described.Table?.StreamSpecification?.StreamViewType).toBe('NEW_AND_OLD_IMAGES');
      },
    });
    const results = [];
    for (const app of apps) {
      const log = await startOnce(app.flag, stage);
      expect(log).toMatch(/stopped: [1-9]\d* invocations?, 0 records discarded/);
      results.push(await archivedOrders(clients.s3, app.bucket));
    }
    const [viaDynamoDbStream, ...viaKinesis] = results;
    expect(viaDynamoDbStream?.map((row) => [row.kind, row.keys.pk?.S])).toEqual(
      EXPIRED_ORDERS.map((pk) => ['ttl-delete', pk]),
    );
    for (const rows of viaKinesis) expect(rows).toEqual(viaDynamoDbStream);
  }, 600_000);

  it("runs tidewater's own service with archiveSource kinesis on infra/kinesis.yml's mapping, archiving what the DynamoDB stream variant archives", async () => {
    const flag = ['-c', join(root, 'serverless.yml')];
    const now = Math.floor(Date.now() / 1000);
    const variants = [];
    for (const source of ['dynamodb-stream', 'kinesis']) {
      const env = { TIDEWATER_ARCHIVE_SOURCE: source };
      const stage = uniqueName(source === 'kinesis' ? 'ok' : 'od').toLowerCase();
      const envFile = join(mkdtempSync(join(tmpdir(), 'tidewater-write-env-')), '.env.local');
      const log = await startWith(env, [...flag, '--show-env-values', '--write-env', envFile], stage);
      const table = startLogName(log, 'table', /RecordsTable/);
      // Every server start ran is in the file, the Kinesis one too (`capture --local-env` reads it).
      const written = readFileSync(envFile, 'utf8');
      expect(written).toMatch(/^AWS_ENDPOINT_URL_DYNAMODB_STREAMS=http:/m);
      expect(written).toMatch(/^AWS_ENDPOINT_URL_SQS=http:/m);
      if (source === 'kinesis')
        expect(written).toMatch(/^AWS_ENDPOINT_URL_KINESIS=http:\/\/127\.0\.0\.1:\d+$/m);
      const bucket = startLogName(log, 'bucket', /ArchiveBucket/);
      if (source === 'kinesis') {
        // The generated DynamoDB stream mapping is switched off; the CloudFormation one reads the stream.
        expect(log).toMatch(
          new RegExp(
            `function archiveTtl \\(src/handlers/archive-ttl.handler\\) ← arn:aws:kinesis:us-east-1:\\d{12}:stream/tidewater-${stage}-changes\\n` +
              '.*batch 100, 1 filter pattern, ReportBatchItemFailures, bisect, retries 5, from TRIM_HORIZON; on failure: queue ',
          ),
        );
        expect(log).toContain('EVENT_SOURCE=kinesis');
        expect(log).toContain("RecordsTable's changes → arn:aws:kinesis:");
      } else expect(log).toMatch(/function archiveTtl \(.*\) ← arn:aws:dynamodb:/);
      variants.push({ env, stage, table, bucket });
      await writeOrders(clients.dynamodb, table, { now, key: { sk: { S: 'ORDER' } } });
    }
    await awaitTtlSweep(
      clients.dynamodb,
      variants.map((v) => v.table),
    );
    const results = [];
    for (const { env, stage, bucket } of variants) {
      const log = await startWith(env, flag, stage);
      // Without --show-env-values: the names and whether each is set, never a value.
      expect(log).toMatch(/environment: .*ARCHIVE_BUCKET \(set\).* \(values: --show-env-values\)/);
      expect(log).not.toMatch(/ARCHIVE_BUCKET=|EVENT_SOURCE=/);
      // The handler (EVENT_SOURCE=kinesis) takes the Kinesis batches: nothing failed or discarded.
      expect(log).toMatch(/stopped: [1-9]\d* invocations?, 0 records discarded/);
      expect(log).not.toMatch(/→ (function-error|partial-failure|invalid-response|timeout)/);
      results.push(await archivedOrders(clients.s3, bucket));
    }
    const [viaDynamoDbStream, viaKinesis] = results;
    expect(viaDynamoDbStream?.map((row) => [row.kind, row.keys.pk?.S, row.keys.sk?.S])).toEqual(
      EXPIRED_ORDERS.map((pk) => ['ttl-delete', pk, 'ORDER']),
    );
    expect(viaKinesis).toEqual(viaDynamoDbStream);
  }, 600_000);

  it.each([
    [
      'a streaming destination naming a stream the app does not declare',
      [
        'StreamArn: !GetAtt ChangeStream.Arn',
        'StreamArn: arn:aws:kinesis:us-east-1:123456789012:stream/other',
      ],
      'OrdersTable.KinesisStreamSpecification.StreamArn: must name an AWS::Kinesis::Stream of the same resources',
    ],
    [
      'an unknown precision',
      ['MICROSECOND', 'NANOSECOND'],
      'must be MILLISECOND or MICROSECOND, got "NANOSECOND"',
    ],
    [
      'a shard count the local server cannot make',
      ['ShardCount: 2', 'ShardCount: 0'],
      'ChangeStream.ShardCount',
    ],
    [
      'an enhanced fan-out consumer',
      ['parallelizationFactor: 2', 'parallelizationFactor: 2\n          consumer: true'],
      'functions.archive.events[].stream.consumer: enhanced fan-out consumers are not emulated locally',
    ],
    [
      'AT_TIMESTAMP',
      ['startingPosition: TRIM_HORIZON', 'startingPosition: AT_TIMESTAMP'],
      'startingPosition must be TRIM_HORIZON or LATEST locally, got "AT_TIMESTAMP"',
    ],
  ])('refuses %s with a ServerlessConfigError, no server started', async (_, [from, to], message) => {
    const dir = mkdtempSync(join(tmpdir(), 'tidewater-bad-kinesis-'));
    const config = join(dir, 'serverless.yml');
    const source = readFileSync(KINESIS_CONFIG, 'utf8');
    expect(source).toContain(from);
    writeFileSync(config, source.replace(from as string, to as string));
    // No endpoints given: had it got that far, start would have launched its own servers.
    const { code, err: log } = await runCli(['start', '--once', '-c', config]);
    expect(code).toBe(EXIT.error);
    expect(log).toContain('ServerlessConfigError');
    expect(log).toContain(message);
    expect(log).not.toMatch(/DynamoDB|Kinesis {3}http|\(stage /);
  });

  it.each([
    [
      'a SAM Kinesis event from AT_TIMESTAMP',
      ['--template', join(fixtures, 'sam-kinesis', 'template.yaml')],
      ['StartingPosition: TRIM_HORIZON', 'StartingPosition: AT_TIMESTAMP'],
      'ArchiveFunction.Events.Expired.Properties.StartingPosition: must be TRIM_HORIZON or LATEST locally, got "AT_TIMESTAMP"',
    ],
    [
      'a CDK mapping on an enhanced fan-out consumer',
      ['--cdk-out', join(fixtures, 'cdk-kinesis.out')],
      [
        '"EventSourceArn": { "Fn::GetAtt": ["ChangeStream4B5C6D7E", "Arn"] }',
        '"EventSourceArn": { "Fn::GetAtt": ["Fanout", "ConsumerARN"] }',
      ],
      'EventSourceArn: names an enhanced fan-out consumer (AWS::Kinesis::StreamConsumer): not emulated locally',
    ],
  ])(
    'refuses %s with a TemplateReadError, no server started',
    async (_, [flag, app], [from, to], message) => {
      const dir = mkdtempSync(join(tmpdir(), 'tidewater-bad-kinesis-template-'));
      cpSync(flag === '--cdk-out' ? (app as string) : dirname(app as string), dir, { recursive: true });
      const file =
        flag === '--cdk-out' ? join(dir, 'OrdersKinesisStack.template.json') : join(dir, 'template.yaml');
      let text = readFileSync(file, 'utf8');
      expect(text).toContain(from);
      text = text.replace(from as string, to as string);
      if (flag === '--cdk-out')
        text = text.replace(
          '"Resources": {',
          '"Resources": { "Fanout": { "Type": "AWS::Kinesis::StreamConsumer", "Properties": { "ConsumerName": "fanout", "StreamARN": { "Fn::GetAtt": ["ChangeStream4B5C6D7E", "Arn"] } } },',
        );
      // The copy's code beside it: a CodeUri must stay inside the template's project (nothing runs).
      else {
        cpSync(join(root, 'src', 'handlers'), join(dir, 'handlers'), { recursive: true });
        text = text.replace('CodeUri: ../../../../src/handlers/', 'CodeUri: handlers/');
      }
      writeFileSync(file, text);
      const { code, err } = await runCli([
        'start',
        '--once',
        flag as string,
        flag === '--cdk-out' ? dir : file,
      ]);
      expect(code).toBe(EXIT.error);
      expect(err).toContain('TemplateReadError');
      expect(err).toContain(message);
      expect(err).not.toMatch(/DynamoDB|Kinesis {3}http|\(stage /);
    },
  );
});
