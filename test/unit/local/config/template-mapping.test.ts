import { describe, expect, it } from 'vitest';
import { TemplateReadError } from '../../../../src/local/config/errors.js';
import { parseStreamEvent, toEmulatorOptions } from '../../../../src/local/config/stream-function.js';
import {
  checkStreamSource,
  mappingSettings,
  mappingSource,
  type TemplateResourceMap,
} from '../../../../src/local/config/template-mapping.js';

const site = { file: '/app/template.yaml', resource: 'ArchiveMapping' };
const STREAM_ARN = { 'Fn::GetAtt': ['ChangeStream', 'Arn'] };
const QUEUE_ARN = { 'Fn::GetAtt': ['OnFailureQueue', 'Arn'] };
const RESOURCES: TemplateResourceMap = {
  ChangeStream: { Type: 'AWS::Kinesis::Stream', Properties: { Name: 'changes', ShardCount: 2 } },
  Fanout: {
    Type: 'AWS::Kinesis::StreamConsumer',
    Properties: { StreamARN: STREAM_ARN, ConsumerName: 'fanout' },
  },
  OrdersTable: {
    Type: 'AWS::DynamoDB::Table',
    Properties: { TableName: 'orders', StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' } },
  },
  OnFailureQueue: { Type: 'AWS::SQS::Queue' },
};
const PARAMETERS = { StreamArnParameter: 'arn:aws:kinesis:eu-west-1:111122223333:stream/changes' };

/** The TemplateReadError `read` throws, or a failure saying it threw none. */
function readError(read: () => unknown): TemplateReadError {
  try {
    read();
  } catch (error) {
    if (error instanceof TemplateReadError) return error;
    throw error;
  }
  throw new Error('read without an error');
}

describe('a Kinesis mapping read from a template', () => {
  it("reads every property into the settings serverless.yml's `stream: type: kinesis` event gives", () => {
    const read = mappingSettings(
      site,
      {
        FunctionName: { Ref: 'ArchiveFunction' },
        EventSourceArn: STREAM_ARN,
        Enabled: false,
        StartingPosition: 'LATEST',
        BatchSize: 25,
        MaximumBatchingWindowInSeconds: 3,
        ParallelizationFactor: 4,
        BisectBatchOnFunctionError: true,
        MaximumRetryAttempts: 7,
        MaximumRecordAgeInSeconds: 600,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        FilterCriteria: { Filters: [{ Pattern: '{"data":{"eventName":["REMOVE"]}}' }] },
        DestinationConfig: { OnFailure: { Type: 'SQS', Destination: QUEUE_ARN } },
        TumblingWindowInSeconds: 30,
        // Changes nothing locally: the key Lambda encrypts the filter with, the metrics it sends.
        KmsKeyArn: 'arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab',
        MetricsConfig: { Metrics: ['EventCount'] },
      },
      'EventSourceArn',
      '',
      'kinesis',
    );
    const fromServerless = parseStreamEvent(
      'archive',
      {
        type: 'kinesis',
        arn: STREAM_ARN,
        enabled: false,
        startingPosition: 'LATEST',
        batchSize: 25,
        batchWindow: 3,
        parallelizationFactor: 4,
        bisectBatchOnFunctionError: true,
        maximumRetryAttempts: 7,
        maximumRecordAgeInSeconds: 600,
        functionResponseType: 'ReportBatchItemFailures',
        filterPatterns: [{ data: { eventName: ['REMOVE'] } }],
        destinations: { onFailure: { type: 'sqs', arn: QUEUE_ARN } },
        tumblingWindowInSeconds: 30,
      },
      'serverless.yml',
    );
    expect(read).toEqual({
      source: 'kinesis',
      arn: STREAM_ARN,
      enabled: false,
      startingPosition: 'LATEST',
      batchSize: 25,
      maximumBatchingWindowInSeconds: 3,
      parallelizationFactor: 4,
      bisectBatchOnFunctionError: true,
      maximumRetryAttempts: 7,
      maximumRecordAgeInSeconds: 600,
      reportBatchItemFailures: true,
      filterPatterns: [{ data: { eventName: ['REMOVE'] } }],
      onFailure: { arn: QUEUE_ARN, type: 'sqs' },
      tumblingWindowInSeconds: 30,
    });
    expect(read).toEqual(fromServerless);
    const fn = {
      key: 'archive',
      functionName: 'archive',
      handler: 'index.handler',
      handlerModule: '/app/index',
      handlerExport: 'handler',
      timeoutSeconds: 30,
      memorySize: 128,
      environment: {},
    };
    expect(toEmulatorOptions({ ...fn, stream: read })).toEqual(
      toEmulatorOptions({ ...fn, stream: fromServerless! }),
    );
  });

  it("takes Lambda's defaults for what a mapping leaves out", () => {
    expect(mappingSettings(site, { EventSourceArn: STREAM_ARN }, 'EventSourceArn', '', 'kinesis')).toEqual({
      source: 'kinesis',
      arn: STREAM_ARN,
      enabled: true,
      startingPosition: 'TRIM_HORIZON',
      reportBatchItemFailures: false,
      bisectBatchOnFunctionError: false,
    });
  });

  it.each([
    [
      'AT_TIMESTAMP',
      { StartingPosition: 'AT_TIMESTAMP' },
      'Events.Changes.Properties.StartingPosition',
      'must be TRIM_HORIZON or LATEST locally, got "AT_TIMESTAMP" (AT_TIMESTAMP is not emulated by the local Kinesis mapping)',
    ],
    [
      'a starting timestamp',
      { StartingPosition: 'TRIM_HORIZON', StartingPositionTimestamp: 1_700_000_000 },
      'Events.Changes.Properties.StartingPositionTimestamp',
      'goes with StartingPosition AT_TIMESTAMP',
    ],
    [
      "another source's property",
      { Queues: ['orders'] },
      'Events.Changes.Properties.Queues',
      'is not a Kinesis stream mapping property',
    ],
    [
      'a batch size that is not a number',
      { BatchSize: '10' },
      'Events.Changes.Properties.BatchSize',
      'must be a number, got "10"',
    ],
    [
      'a response type Lambda does not have',
      { FunctionResponseTypes: ['ReportBatchItemFailure'] },
      'Events.Changes.Properties.FunctionResponseTypes',
      'must be [ReportBatchItemFailures] or absent',
    ],
    [
      'an on-failure destination without its ARN',
      { DestinationConfig: { OnFailure: { Type: 'SQS' } } },
      'Events.Changes.Properties.DestinationConfig',
      'must hold OnFailure.Destination',
    ],
  ])('refuses %s, naming the property', (_, properties, property, message) => {
    const error = readError(() =>
      mappingSettings(
        site,
        { Stream: STREAM_ARN, ...properties },
        'Stream',
        'Events.Changes.Properties.',
        'kinesis',
      ),
    );
    expect(error.property).toBe(property);
    expect(error.message).toContain(message);
  });

  it('keeps a DynamoDB mapping to its own properties and positions', () => {
    expect(
      readError(() =>
        mappingSettings(site, { EventSourceArn: STREAM_ARN, KmsKeyArn: 'arn' }, 'EventSourceArn'),
      ).message,
    ).toContain('KmsKeyArn: is not a DynamoDB stream mapping property');
    expect(
      readError(() =>
        mappingSettings(
          site,
          { EventSourceArn: STREAM_ARN, StartingPosition: 'AT_TIMESTAMP' },
          'EventSourceArn',
        ),
      ).message,
    ).toContain('must be TRIM_HORIZON or LATEST for a DynamoDB stream');
  });
});

describe('mappingSource', () => {
  it.each([
    ['the Arn of a Kinesis stream', STREAM_ARN, 'kinesis'],
    ['a stream consumer (refused later, as a Kinesis mapping)', { Ref: 'Fanout' }, 'kinesis'],
    ['a Kinesis ARN', 'arn:aws:kinesis:us-east-1:111122223333:stream/changes', 'kinesis'],
    ['a parameter holding a Kinesis ARN', { Ref: 'StreamArnParameter' }, 'kinesis'],
    ["a table's stream", { 'Fn::GetAtt': ['OrdersTable', 'StreamArn'] }, 'dynamodb'],
    ['a DynamoDB stream ARN', 'arn:aws:dynamodb:us-east-1:1:table/orders/stream/2024', 'dynamodb'],
  ])('reads %s', (_, arn, source) => {
    expect(mappingSource(arn, RESOURCES, PARAMETERS)).toBe(source);
  });
});

describe("checkStreamSource on a Kinesis mapping's stream", () => {
  const check = (arn: unknown) =>
    checkStreamSource(site, 'EventSourceArn', { source: 'kinesis', arn }, RESOURCES, PARAMETERS);

  it.each([
    ['Fn::GetAtt [Stream, Arn]', STREAM_ARN],
    ['the dotted Fn::GetAtt', { 'Fn::GetAtt': 'ChangeStream.Arn' }],
    ['an ARN naming the stream by its Name (any account and region)', PARAMETERS.StreamArnParameter],
    ['a parameter whose Default is such an ARN', { Ref: 'StreamArnParameter' }],
  ])('accepts %s', (_, arn) => {
    expect(() => check(arn)).not.toThrow();
  });

  it.each([
    [
      'a consumer by Fn::GetAtt',
      { 'Fn::GetAtt': ['Fanout', 'ConsumerARN'] },
      'names an enhanced fan-out consumer (AWS::Kinesis::StreamConsumer): not emulated locally',
    ],
    ['a consumer by Ref', { Ref: 'Fanout' }, 'enhanced fan-out consumer'],
    [
      'a consumer ARN',
      'arn:aws:kinesis:us-east-1:111122223333:stream/changes/consumer/fanout:1700000000',
      'enhanced fan-out consumer',
    ],
    ["the stream's Ref (its name)", { Ref: 'ChangeStream' }, "Ref ChangeStream is the stream's name"],
    [
      "a table's stream",
      { 'Fn::GetAtt': ['OrdersTable', 'StreamArn'] },
      'names OrdersTable.StreamArn: not the Arn of an AWS::Kinesis::Stream in the template',
    ],
    [
      'a stream the template does not declare',
      'arn:aws:kinesis:us-east-1:111122223333:stream/other',
      'is not a Kinesis stream the template declares',
    ],
    ['an intrinsic not resolved locally', { 'Fn::ImportValue': 'shared' }, 'is not resolved locally'],
  ])('refuses %s', (_, arn, message) => {
    const error = readError(() => check(arn));
    expect(error).toMatchObject({
      name: 'TemplateReadError',
      resource: 'ArchiveMapping',
      property: 'EventSourceArn',
    });
    expect(error.message).toContain(message);
  });
});
