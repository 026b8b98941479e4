import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TemplateReadError } from '../../../../src/local/config/errors.js';
import { readSamTemplate } from '../../../../src/local/config/sam-template.js';
import { toEmulatorOptions } from '../../../../src/local/config/stream-function.js';

const fixture = join(import.meta.dirname, 'fixtures', 'sam');
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The fixture copied, its template text edited: a bad template without touching the good one. */
function edited(edit: (text: string) => string): string {
  const dir = mkdtempSync(join(tmpdir(), 'tidewater-sam-'));
  dirs.push(dir);
  cpSync(fixture, dir, { recursive: true });
  const file = join(dir, 'template.yaml');
  writeFileSync(file, edit(readFileSync(file, 'utf8')));
  return file;
}

/** The fixture's DynamoDB event made a Kinesis event on a stream (and a consumer) it declares. */
function onKinesis(text: string): string {
  return text
    .replace(
      '  ArchiveBucket:\n',
      [
        '  ChangeStream:',
        '    Type: AWS::Kinesis::Stream',
        '    Properties: { ShardCount: 1 }',
        '  Fanout:',
        '    Type: AWS::Kinesis::StreamConsumer',
        '    Properties: { StreamARN: { "Fn::GetAtt": [ChangeStream, Arn] }, ConsumerName: fanout }',
        '  ArchiveBucket:\n',
      ].join('\n'),
    )
    .replace('Type: DynamoDB', 'Type: Kinesis')
    .replace('!GetAtt OrdersTable.StreamArn', '!GetAtt ChangeStream.Arn')
    .replace('StartingPosition: TRIM_HORIZON', 'StartingPosition: LATEST')
    .replace(
      'BatchSize: 50',
      'BatchSize: 50\n            ParallelizationFactor: 3\n            TumblingWindowInSeconds: 120',
    );
}

function readError(file: string): TemplateReadError {
  try {
    readSamTemplate(file);
  } catch (error) {
    if (error instanceof TemplateReadError) return error;
    throw error;
  }
  throw new Error(`${file} was read without an error`);
}

describe('readSamTemplate', () => {
  it('refuses a template that is not a regular file (a device reads without end) before reading it', () => {
    expect(readError('/dev/zero').message).toMatch(/is not a regular file/);
  });

  it('reads a DynamoDB event as the emulator settings Lambda would run it with', () => {
    const app = readSamTemplate(join(fixture, 'template.yaml'));
    expect(app.functions).toHaveLength(1);
    const [fn] = app.functions;
    expect(fn).toMatchObject({
      key: 'ArchiveFunction',
      handlerModule: join(fixture, 'src', 'archive'),
      handlerExport: 'handler',
      timeoutSeconds: 30,
      memorySize: 512,
      environment: { LOG_LEVEL: 'info', ARCHIVE_BUCKET: { Ref: 'ArchiveBucket' } },
      stream: {
        arn: { 'Fn::GetAtt': ['OrdersTable', 'StreamArn'] },
        onFailure: { arn: { 'Fn::GetAtt': ['OnFailureQueue', 'Arn'] }, type: 'sqs' },
      },
    });
    expect(toEmulatorOptions(fn!)).toMatchObject({
      batchSize: 50,
      reportBatchItemFailures: true,
      bisectBatchOnFunctionError: true,
      maximumRetryAttempts: 2,
      maximumRecordAgeInSeconds: 3600,
      filterPatterns: [{ eventName: ['REMOVE'], userIdentity: { type: ['Service'] } }],
    });
  });

  it('gives the planner plain CloudFormation: a SimpleTable becomes the on-demand table SAM deploys', () => {
    const { resources } = readSamTemplate(join(fixture, 'template.yaml'));
    expect(Object.keys(resources).sort()).toEqual([
      'ArchiveBucket',
      'OnFailureQueue',
      'OrdersTable',
      'Sessions',
    ]);
    expect(resources.Sessions).toEqual({
      Type: 'AWS::DynamoDB::Table',
      Properties: {
        AttributeDefinitions: [{ AttributeName: 'sessionId', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'sessionId', KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
      },
    });
  });

  it('reads a Kinesis event as a Kinesis mapping on the stream the template declares', () => {
    const app = readSamTemplate(edited(onKinesis));
    expect(app.functions).toHaveLength(1);
    expect(app.functions[0]?.stream).toEqual({
      source: 'kinesis',
      arn: { 'Fn::GetAtt': ['ChangeStream', 'Arn'] },
      enabled: true,
      startingPosition: 'LATEST',
      batchSize: 50,
      parallelizationFactor: 3,
      tumblingWindowInSeconds: 120,
      reportBatchItemFailures: true,
      bisectBatchOnFunctionError: true,
      maximumRetryAttempts: 2,
      maximumRecordAgeInSeconds: 3600,
      filterPatterns: [{ eventName: ['REMOVE'], userIdentity: { type: ['Service'] } }],
      onFailure: { arn: { 'Fn::GetAtt': ['OnFailureQueue', 'Arn'] }, type: 'sqs' },
    });
    expect(app.resources.ChangeStream).toEqual({
      Type: 'AWS::Kinesis::Stream',
      Properties: { ShardCount: 1 },
    });
  });

  it.each([
    [
      'an enhanced fan-out consumer',
      (t: string) => onKinesis(t).replace('!GetAtt ChangeStream.Arn', '!GetAtt Fanout.ConsumerARN'),
      'Events.Expired.Properties.Stream',
      'names an enhanced fan-out consumer (AWS::Kinesis::StreamConsumer): not emulated locally',
    ],
    [
      'AT_TIMESTAMP',
      (t: string) => onKinesis(t).replace('StartingPosition: LATEST', 'StartingPosition: AT_TIMESTAMP'),
      'Events.Expired.Properties.StartingPosition',
      'AT_TIMESTAMP is not emulated by the local Kinesis mapping',
    ],
    [
      "a table's stream",
      (t: string) => onKinesis(t).replace('!GetAtt ChangeStream.Arn', '!GetAtt OrdersTable.StreamArn'),
      'Events.Expired.Properties.Stream',
      'not the Arn of an AWS::Kinesis::Stream in the template',
    ],
  ])('refuses a Kinesis event on %s, naming the property', (_, edit, property, message) => {
    const error = readError(edited(edit));
    expect({ resource: error.resource, property: error.property }).toEqual({
      resource: 'ArchiveFunction',
      property,
    });
    expect(error.message).toContain(message);
  });

  it.each([
    ['no stream mapping', (t: string) => t.replace('Type: DynamoDB', 'Type: SQS'), 'template', 'Resources'],
    [
      'code on S3',
      (t: string) => t.replace('CodeUri: src/', 'CodeUri: s3://bucket/code.zip'),
      'ArchiveFunction',
      'CodeUri',
    ],
    [
      'a missing code folder',
      (t: string) => t.replace('CodeUri: src/', 'CodeUri: gone/'),
      'ArchiveFunction',
      'CodeUri',
    ],
    [
      'an intrinsic not resolved locally',
      (t: string) => t.replace('!Ref ArchiveBucket', '!ImportValue shared-bucket'),
      'ArchiveFunction',
      'Environment.Variables.ARCHIVE_BUCKET',
    ],
    [
      'a Kinesis-only setting',
      (t: string) => t.replace('BatchSize: 50', 'BatchSize: 50\n            StartingPositionTimestamp: 1'),
      'ArchiveFunction',
      'Events.Expired.Properties.StartingPositionTimestamp',
    ],
    [
      'a filter that is not JSON',
      (t: string) => t.replace(/- Pattern: '.*'/, "- Pattern: '{eventName'"),
      'ArchiveFunction',
      'Events.Expired.Properties.FilterCriteria.Filters[0].Pattern',
    ],
  ])('names the resource and property for %s', (_, edit, resource, property) => {
    const error = readError(edited(edit));
    expect(error.name).toBe('TemplateReadError');
    expect({ resource: error.resource, property: error.property }).toEqual({ resource, property });
    expect(error.message).toContain(`${resource}${property ? `.${property}` : ''}`);
  });
});
