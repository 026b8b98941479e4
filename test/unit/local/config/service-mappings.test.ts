import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { ServerlessConfigError } from '../../../../src/local/config/errors.js';
import { serverlessApp } from '../../../../src/local/config/local-app.js';
import { loadServerlessConfig } from '../../../../src/local/config/serverless-config.js';
import {
  eventMappingLogicalId,
  lambdaLogicalId,
  serviceStreamFunctions,
} from '../../../../src/local/config/service-mappings.js';

// serverless v3's own naming (osls, the devDependency that packages serverless.yml).
const naming = createRequire(import.meta.url)('osls/lib/plugins/aws/lib/naming.js') as {
  getLambdaLogicalId(key: string): string;
  getStreamLogicalId(key: string, type: string, name: string): string;
};

const root = join(import.meta.dirname, '..', '..', '..', '..');
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A service whose `archive` function is triggered by an EventSourceMapping in `resources:`. */
function service(edit: (text: string) => string = (text) => text): string {
  const dir = mkdtempSync(join(tmpdir(), 'tidewater-service-mappings-'));
  dirs.push(dir);
  const file = join(dir, 'serverless.yml');
  const text = `service: orders
provider:
  name: aws
functions:
  archive:
    handler: src/archive.handler
    timeout: 30
  audit:
    handler: src/audit.handler
    events:
      - stream:
          type: dynamodb
          arn: !GetAtt OrdersTable.StreamArn
resources:
  - Parameters:
      Source:
        Type: String
        Default: kinesis
    Conditions:
      ReadsKinesis: !Equals [!Ref Source, kinesis]
      ReadsTable: !Equals [!Ref Source, dynamodb]
  - Resources:
      OrdersTable:
        Type: AWS::DynamoDB::Table
        Properties:
          AttributeDefinitions: [{ AttributeName: pk, AttributeType: S }]
          KeySchema: [{ AttributeName: pk, KeyType: HASH }]
          StreamSpecification: { StreamViewType: NEW_AND_OLD_IMAGES }
          KinesisStreamSpecification: { StreamArn: !GetAtt ChangeStream.Arn }
      ChangeStream:
        Type: AWS::Kinesis::Stream
        Properties: { ShardCount: 1 }
      Fanout:
        Type: AWS::Kinesis::StreamConsumer
        Properties: { StreamARN: !GetAtt ChangeStream.Arn, ConsumerName: fanout }
      OnFailureQueue:
        Type: AWS::SQS::Queue
      ArchiveMapping:
        Type: AWS::Lambda::EventSourceMapping
        Condition: ReadsKinesis
        Properties:
          FunctionName: !GetAtt ArchiveLambdaFunction.Arn
          EventSourceArn: !GetAtt ChangeStream.Arn
          StartingPosition: TRIM_HORIZON
          BatchSize: 20
          ParallelizationFactor: 2
          FunctionResponseTypes: [ReportBatchItemFailures]
          FilterCriteria:
            Filters:
              - Pattern: '{"data":{"eventName":["REMOVE"]}}'
          DestinationConfig:
            OnFailure:
              Destination: !GetAtt OnFailureQueue.Arn
    extensions:
      AuditEventSourceMappingDynamodbOrdersTable:
        Condition: ReadsTable
`;
  writeFileSync(file, edit(text));
  return file;
}

async function read(file: string, keys?: string[]) {
  return serviceStreamFunctions(await loadServerlessConfig({ file, env: {} }), keys);
}

async function readError(file: string, keys?: string[]): Promise<ServerlessConfigError> {
  const error = await read(file, keys).then(
    () => new Error(`${file} was read without an error`),
    (error: unknown) => error,
  );
  if (error instanceof ServerlessConfigError) return error;
  throw error;
}

describe("serverless.yml's resources: mappings", () => {
  it("names a function's resources and generated mappings as serverless v3 does", () => {
    const key = fc.stringMatching(/^[a-zA-Z][a-zA-Z0-9_-]{0,20}$/);
    const name = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_.-]{0,20}$/);
    fc.assert(
      fc.property(key, name, fc.constantFrom('dynamodb', 'kinesis'), (fn, stream, type) => {
        expect(lambdaLogicalId(fn)).toBe(naming.getLambdaLogicalId(fn));
        const source = type === 'kinesis' ? { source: 'kinesis' as const } : {};
        const expected = naming.getStreamLogicalId(fn, type, stream);
        for (const arn of [
          { 'Fn::GetAtt': [stream, 'Arn'] },
          { Ref: stream },
          { 'Fn::ImportValue': stream },
          { 'Fn::Join': [':', ['arn', `table/${stream}`]] },
          `arn:aws:${type}:us-east-1:1:stream/${stream}`,
        ])
          expect(eventMappingLogicalId(fn, { arn, ...source })).toBe(expected);
      }),
    );
  });

  it('runs a mapping whose Condition holds on its function, and drops a generated one an extension switches off', async () => {
    const functions = await read(service());
    expect(functions.map((fn) => fn.key)).toEqual(['archive']);
    expect(functions[0]).toMatchObject({
      key: 'archive',
      functionName: 'orders-dev-archive',
      timeoutSeconds: 30,
      stream: {
        source: 'kinesis',
        arn: { 'Fn::GetAtt': ['ChangeStream', 'Arn'] },
        startingPosition: 'TRIM_HORIZON',
        batchSize: 20,
        parallelizationFactor: 2,
        reportBatchItemFailures: true,
        filterPatterns: [{ data: { eventName: ['REMOVE'] } }],
        onFailure: { arn: { 'Fn::GetAtt': ['OnFailureQueue', 'Arn'] } },
      },
    });
    // The other branch: the mapping is not created, the generated one is.
    const other = await read(service((text) => text.replace('Default: kinesis', 'Default: dynamodb')));
    expect(other.map((fn) => [fn.key, fn.stream.source ?? 'dynamodb'])).toEqual([['audit', 'dynamodb']]);
    expect((await readError(service(), ['audit'])).message).toContain(
      "function 'audit': its stream event's mapping is switched off by a false Condition in resources.extensions",
    );
  });

  it("reads a mapping's Ref to a parameter as its Default, a stream ARN naming a declared stream", async () => {
    const arn = 'arn:aws:kinesis:us-east-1:000000000000:stream/changes';
    const [fn] = await read(
      service((text) =>
        text
          .replace(
            'Default: kinesis',
            `Default: kinesis\n      ChangeStreamArn:\n        Type: String\n        Default: ${arn}`,
          )
          .replace('Properties: { ShardCount: 1 }', 'Properties: { Name: changes, ShardCount: 1 }')
          .replace('EventSourceArn: !GetAtt ChangeStream.Arn', 'EventSourceArn: !Ref ChangeStreamArn'),
      ),
    );
    expect(fn?.stream).toMatchObject({ source: 'kinesis', arn });
  });

  it.each([
    [
      'an enhanced fan-out consumer',
      (t: string) => t.replace('EventSourceArn: !GetAtt ChangeStream.Arn', 'EventSourceArn: !Ref Fanout'),
      'resources ArchiveMapping.EventSourceArn: names an enhanced fan-out consumer',
    ],
    [
      'AT_TIMESTAMP',
      (t: string) => t.replace('StartingPosition: TRIM_HORIZON', 'StartingPosition: AT_TIMESTAMP'),
      'resources ArchiveMapping.StartingPosition: must be TRIM_HORIZON or LATEST locally, got "AT_TIMESTAMP"',
    ],
    [
      'a function serverless.yml does not declare',
      (t: string) => t.replace('!GetAtt ArchiveLambdaFunction.Arn', '!GetAtt OtherLambdaFunction.Arn'),
      'resources ArchiveMapping.FunctionName: must be Fn::GetAtt [<Key>LambdaFunction, Arn] or Ref of a function under functions: (ArchiveLambdaFunction, AuditLambdaFunction)',
    ],
    [
      'a function with a stream event too',
      (t: string) =>
        t
          .replace('!GetAtt ArchiveLambdaFunction.Arn', '!Ref AuditLambdaFunction')
          .replace('Condition: ReadsTable', 'Condition: ReadsKinesis'),
      "function 'audit' has a stream event and the mapping ArchiveMapping in resources:; run one at a time",
    ],
  ])('refuses %s with a ServerlessConfigError', async (_, edit, message) => {
    const error = await readError(service(edit));
    expect(error.name).toBe('ServerlessConfigError');
    expect(error.message).toContain(message);
  });

  it("reads tidewater's own service: archiveTtl on the table's stream, or with archiveSource kinesis on infra/kinesis.yml's mapping", async () => {
    const archiveOf = async (source: string) => {
      const config = await loadServerlessConfig({
        file: join(root, 'serverless.yml'),
        stage: 'unit',
        env: { TIDEWATER_ARCHIVE_SOURCE: source },
      });
      const app = await serverlessApp(config);
      const functions = await app.streamFunctions();
      expect(functions.map((fn) => fn.key)).toEqual(['archiveTtl']);
      return { fn: functions[0], plan: await app.plan() };
    };
    const settings = {
      startingPosition: 'TRIM_HORIZON',
      batchSize: 100,
      maximumBatchingWindowInSeconds: 5,
      reportBatchItemFailures: true,
      bisectBatchOnFunctionError: true,
      maximumRetryAttempts: 5,
      maximumRecordAgeInSeconds: 86_400,
    };
    const table = await archiveOf('dynamodb-stream');
    expect(table.fn?.stream).toMatchObject({
      arn: { 'Fn::GetAtt': ['RecordsTable', 'StreamArn'] },
      ...settings,
    });
    expect(table.fn?.stream.source).toBeUndefined();
    expect(table.plan.kinesisStreams).toEqual([]);
    const kinesis = await archiveOf('kinesis');
    expect(kinesis.fn?.stream).toMatchObject({
      source: 'kinesis',
      arn: { 'Fn::GetAtt': ['ChangeStream', 'Arn'] },
      ...settings,
      onFailure: { arn: { 'Fn::GetAtt': ['OnFailureQueue', 'Arn'] } },
    });
    // The same routes' filter, on the Kinesis record's data.
    expect(kinesis.fn?.stream.filterPatterns).toEqual(
      table.fn?.stream.filterPatterns?.map((pattern) => ({ data: pattern })),
    );
    expect(kinesis.fn?.environment.EVENT_SOURCE).toBe('kinesis');
    const [stream] = kinesis.plan.kinesisStreams;
    expect(stream?.streamName).toBe('tidewater-unit-changes');
    expect(kinesis.plan.tables[0]?.kinesisDestination?.streamArn).toBe(stream?.arn);
  });
});
