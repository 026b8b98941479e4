import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readCdkOut } from '../../../../src/local/config/cdk-out.js';
import { TemplateReadError } from '../../../../src/local/config/errors.js';
import { toEmulatorOptions } from '../../../../src/local/config/stream-function.js';

const fixture = join(import.meta.dirname, 'fixtures', 'cdk.out');
const TEMPLATE = 'OrdersStack.template.json';
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

type Template = {
  Resources: Record<string, { Type?: string; Properties: Record<string, unknown>; Metadata?: unknown }>;
};

/** The archive mapping pointed at a Kinesis stream the stack declares (KinesisEventSource's output). */
function onKinesis(t: Template): void {
  t.Resources.ChangeStream4B5C = { Type: 'AWS::Kinesis::Stream', Properties: { ShardCount: 1 } };
  t.Resources.Fanout7D8E = {
    Type: 'AWS::Kinesis::StreamConsumer',
    Properties: { StreamARN: { 'Fn::GetAtt': ['ChangeStream4B5C', 'Arn'] }, ConsumerName: 'fanout' },
  };
  Object.assign(t.Resources.ArchiveFunctionDynamoDBEventSource0A1B!.Properties, {
    EventSourceArn: { 'Fn::GetAtt': ['ChangeStream4B5C', 'Arn'] },
    ParallelizationFactor: 2,
    FilterCriteria: { Filters: [{ Pattern: '{"data":{"eventName":["REMOVE"]}}' }] },
  });
}

/** The fixture copied, its stack template edited. */
function edited(edit: (template: Template, dir: string) => void): string {
  const dir = mkdtempSync(join(tmpdir(), 'tidewater-cdk-out-'));
  dirs.push(dir);
  cpSync(fixture, dir, { recursive: true });
  const file = join(dir, TEMPLATE);
  const template = JSON.parse(readFileSync(file, 'utf8')) as Template;
  edit(template, dir);
  writeFileSync(file, JSON.stringify(template));
  return dir;
}

function readError(dir: string): TemplateReadError {
  try {
    readCdkOut(dir);
  } catch (error) {
    if (error instanceof TemplateReadError) return error;
    throw error;
  }
  throw new Error(`${dir} was read without an error`);
}

describe('readCdkOut', () => {
  it('reads every event source mapping with its function, code from the asset folder', () => {
    const app = readCdkOut(fixture);
    const byKey = Object.fromEntries(app.functions.map((fn) => [fn.key, fn]));
    expect(Object.keys(byKey).sort()).toEqual(['ArchiveFunction5A6B', 'AuditFunction1C2D']);
    expect(byKey.ArchiveFunction5A6B).toMatchObject({
      handlerModule: join(fixture, 'asset.4f1c2a', 'index'),
      handlerExport: 'handler',
      timeoutSeconds: 30,
      memorySize: 128,
      environment: { ARCHIVE_BUCKET: { Ref: 'ArchiveBucket7A2B' } },
      stream: { onFailure: { arn: { 'Fn::GetAtt': ['OnFailureQueue9C3D', 'Arn'] } } },
    });
    expect(toEmulatorOptions(byKey.ArchiveFunction5A6B!)).toMatchObject({
      batchSize: 50,
      reportBatchItemFailures: true,
      bisectBatchOnFunctionError: true,
      maximumRetryAttempts: 2,
      maximumRecordAgeInSeconds: 3600,
      filterPatterns: [{ eventName: ['REMOVE'] }],
    });
    // Code.S3Key alone (no asset metadata) finds asset.<hash>.
    expect(byKey.AuditFunction1C2D?.handlerModule).toBe(join(fixture, 'asset.9b0d7e', 'index'));
    expect(byKey.AuditFunction1C2D?.stream).toMatchObject({
      startingPosition: 'LATEST',
      tumblingWindowInSeconds: 60,
    });
    expect(Object.keys(app.resources)).toEqual(
      expect.arrayContaining(['OrdersTable0D1E', 'ArchiveBucket7A2B', 'OnFailureQueue9C3D']),
    );
    expect(app.resources).not.toHaveProperty('ArchiveFunction5A6B');
  });

  it('reads a mapping on a Kinesis stream as a Kinesis mapping, the stream planned for the local server', () => {
    const dir = edited(onKinesis);
    const app = readCdkOut(dir);
    const archive = app.functions.find((fn) => fn.key === 'ArchiveFunction5A6B');
    expect(archive?.stream).toMatchObject({
      source: 'kinesis',
      arn: { 'Fn::GetAtt': ['ChangeStream4B5C', 'Arn'] },
      startingPosition: 'TRIM_HORIZON',
      batchSize: 50,
      parallelizationFactor: 2,
      reportBatchItemFailures: true,
      filterPatterns: [{ data: { eventName: ['REMOVE'] } }],
    });
    // The table's own mapping stays a DynamoDB one.
    expect(app.functions.find((fn) => fn.key === 'AuditFunction1C2D')?.stream.source).toBeUndefined();
    expect(app.resources.ChangeStream4B5C?.Type).toBe('AWS::Kinesis::Stream');
  });

  it.each([
    [
      'an enhanced fan-out consumer',
      { 'Fn::GetAtt': ['Fanout7D8E', 'ConsumerARN'] },
      {},
      'EventSourceArn',
      'enhanced fan-out consumer',
    ],
    [
      'AT_TIMESTAMP',
      { 'Fn::GetAtt': ['ChangeStream4B5C', 'Arn'] },
      { StartingPosition: 'AT_TIMESTAMP', StartingPositionTimestamp: 1_700_000_000 },
      'StartingPosition',
      'AT_TIMESTAMP is not emulated by the local Kinesis mapping',
    ],
  ])('refuses a Kinesis mapping on %s', (_, arn, properties, property, message) => {
    const error = readError(
      edited((t) => {
        onKinesis(t);
        Object.assign(t.Resources.ArchiveFunctionDynamoDBEventSource0A1B!.Properties, {
          EventSourceArn: arn,
          ...properties,
        });
      }),
    );
    expect({ resource: error.resource, property: error.property }).toEqual({
      resource: 'ArchiveFunctionDynamoDBEventSource0A1B',
      property,
    });
    expect(error.message).toContain(message);
  });

  it.each([
    [
      'an asset missing from cdk.out',
      (_: Template, dir: string) => rmSync(join(dir, 'asset.9b0d7e'), { recursive: true }),
      'AuditFunction1C2D',
      'Code.S3Key',
    ],
    [
      'inline code',
      (t: Template) => {
        t.Resources.AuditFunction1C2D!.Properties.Code = { ZipFile: 'exports.handler = () => {}' };
      },
      'AuditFunction1C2D',
      'Code',
    ],
    [
      'a mapping to a function outside the template',
      (t: Template) => {
        t.Resources.AuditFunctionDynamoDBEventSource3E4F!.Properties.FunctionName =
          'arn:aws:lambda:::function:x';
      },
      'AuditFunctionDynamoDBEventSource3E4F',
      'FunctionName',
    ],
    [
      'an intrinsic not resolved locally',
      (t: Template) => {
        t.Resources.ArchiveFunction5A6B!.Properties.Environment = {
          Variables: { ARCHIVE_BUCKET: { 'Fn::ImportValue': 'shared' } },
        };
      },
      'ArchiveFunction5A6B',
      'Environment.Variables.ARCHIVE_BUCKET',
    ],
    [
      'no stream mapping',
      (t: Template) => {
        delete t.Resources.ArchiveFunctionDynamoDBEventSource0A1B;
        delete t.Resources.AuditFunctionDynamoDBEventSource3E4F;
      },
      'templates',
      'Resources',
    ],
  ])('names the resource and property for %s', (_, edit, resource, property) => {
    const error = readError(edited(edit));
    expect(error.name).toBe('TemplateReadError');
    expect({ resource: error.resource, property: error.property }).toEqual({ resource, property });
  });
});
