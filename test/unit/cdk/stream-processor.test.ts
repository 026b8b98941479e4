import { Match, Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Duration } from 'aws-cdk-lib/core';
import { describe, expect, it } from 'vitest';
import { StreamProcessor } from '../../../src/cdk.js';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import { eventNames, filterPattern, newImageAttribute } from '../../../src/filters/builder.js';
import { toFilterCriteria } from '../../../src/filters/criteria.js';
import { FilterCriteriaError } from '../../../src/filters/errors.js';
import { inserts, ttlDeletes, userDeletes } from '../../../src/filters/ready-made.js';
import { granting, iamStatements, inlineCode, newStack, streamTable } from './stack.js';

function processor(props: Partial<ConstructorParameters<typeof StreamProcessor>[2]> = {}) {
  const stack = newStack();
  const table = streamTable(stack);
  const built = new StreamProcessor(stack, 'Orders', { table, function: { code: inlineCode() }, ...props });
  return { stack, table, built, template: Template.fromStack(stack) };
}

describe('StreamProcessor', () => {
  it('maps the stream with the serverless service settings, event-count metrics on', () => {
    const { template } = processor();
    template.resourceCountIs('AWS::Lambda::EventSourceMapping', 1);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^Table'), 'StreamArn'] },
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: 100,
      MaximumBatchingWindowInSeconds: 5,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: 5,
      MaximumRecordAgeInSeconds: 86_400,
      ParallelizationFactor: 1,
      MetricsConfig: { Metrics: ['EventCount'] },
      DestinationConfig: {
        OnFailure: { Destination: { 'Fn::GetAtt': [Match.stringLikeRegexp('OnFailureQueue'), 'Arn'] } },
      },
      FilterCriteria: Match.absent(),
    });
    // The default on-failure queue: encrypted, TLS-only, kept 14 days.
    template.hasResourceProperties('AWS::SQS::Queue', {
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: 1_209_600,
    });
    template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      PolicyDocument: {
        Statement: [
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ],
      },
    });
  });

  it('builds the function on Node.js 22 / arm64 with its own role: no managed policy, logs only to its group', () => {
    const { template } = processor();
    template.hasResourceProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
      Timeout: 60,
      LoggingConfig: { LogGroup: { Ref: Match.stringLikeRegexp('FunctionLogs') } },
    });
    template.hasResourceProperties('AWS::IAM::Role', { ManagedPolicyArns: Match.absent() });
    template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 30 });
    const [logs] = granting(template, 'logs:PutLogEvents');
    expect(logs?.Resource).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/FunctionLogs/), 'Arn'] });
  });

  it('reads the stream with grants on the stream ARN only, made before the mapping exists', () => {
    const { template } = processor();
    const [read] = granting(template, 'dynamodb:GetRecords');
    expect(read?.Action).toEqual([
      'dynamodb:DescribeStream',
      'dynamodb:GetRecords',
      'dynamodb:GetShardIterator',
      'dynamodb:ListStreams',
    ]);
    expect(read?.Resource).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^Table/), 'StreamArn'] });
    expect(granting(template, 'sqs:SendMessage').map((s) => s.Resource)).toEqual([
      { 'Fn::GetAtt': [expect.stringMatching(/OnFailureQueue/), 'Arn'] },
    ]);
    const [mapping] = Object.values(template.findResources('AWS::Lambda::EventSourceMapping'));
    expect(mapping?.DependsOn).toEqual([expect.stringMatching(/RoleDefaultPolicy/)]);
  });

  it("deploys the builder's patterns as Lambda's FilterCriteria, patterns or criteria alike", () => {
    const patterns = [
      ttlDeletes(),
      filterPattern(eventNames('INSERT'), newImageAttribute('status').S.equals('PAID')),
    ];
    const expected = toFilterCriteria(patterns);
    for (const filters of [patterns, expected]) {
      const { template, built } = processor({ filters });
      expect(built.filterCriteria).toEqual(expected);
      template.hasResourceProperties('AWS::Lambda::EventSourceMapping', { FilterCriteria: expected });
    }
  });

  it("refuses filters beyond Lambda's quota at synth time, unless the raised quota is given", () => {
    const six = [
      ttlDeletes(),
      userDeletes(),
      inserts(),
      ...[1, 2, 3].map((n) => ({ eventName: ['MODIFY'], dynamodb: { Keys: { pk: { S: [`k${n}`] } } } })),
    ];
    expect(() => processor({ filters: six })).toThrow(FilterCriteriaError);
    const { built } = processor({ filters: six, maxFilters: 10 });
    expect(built.filterCriteria?.Filters).toHaveLength(6);
  });

  it('sends failures to an S3 bucket with PutObject under aws/lambda/ and ListBucket, nothing wider', () => {
    const stack = newStack();
    const bucket = new s3.Bucket(stack, 'Failures');
    new StreamProcessor(stack, 'Orders', {
      table: streamTable(stack),
      function: { code: inlineCode() },
      onFailure: bucket,
    });
    const template = Template.fromStack(stack);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      DestinationConfig: {
        OnFailure: { Destination: { 'Fn::GetAtt': [Match.stringLikeRegexp('^Failures'), 'Arn'] } },
      },
    });
    template.resourceCountIs('AWS::SQS::Queue', 0);
    const [put] = granting(template, 's3:PutObject');
    expect(put?.Resource).toEqual({
      'Fn::Join': ['', [{ 'Fn::GetAtt': [expect.stringMatching(/^Failures/), 'Arn'] }, '/aws/lambda/*']],
    });
    const s3Actions = iamStatements(template)
      .flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action]))
      .filter((a) => a.startsWith('s3:'));
    expect(s3Actions.sort()).toEqual(['s3:ListBucket', 's3:PutObject']);
  });

  it('grants a KMS-encrypted table’s key only for Decrypt, only through DynamoDB', () => {
    const stack = newStack();
    const key = new kms.Key(stack, 'Key');
    new StreamProcessor(stack, 'Orders', {
      table: streamTable(stack, key),
      function: { code: inlineCode() },
    });
    const kmsStatements = iamStatements(Template.fromStack(stack)).filter((s) =>
      JSON.stringify(s.Action).includes('kms:'),
    );
    expect(kmsStatements).toEqual([
      expect.objectContaining({
        Action: 'kms:Decrypt',
        Condition: {
          StringEquals: {
            'kms:ViaService': [{ 'Fn::Join': ['', ['dynamodb.', { Ref: 'AWS::Region' }, '.amazonaws.com']] }],
          },
        },
      }),
    ]);
  });

  it('attaches to an existing function: its role gets the grants, no function is built', () => {
    const stack = newStack();
    const fn = new lambda.Function(stack, 'Mine', {
      runtime: lambda.Runtime.NODEJS_22_X,
      handler: 'index.handler',
      code: inlineCode(),
    });
    const built = new StreamProcessor(stack, 'Orders', {
      table: streamTable(stack),
      function: fn,
      batchSize: 10,
    });
    expect(built.function).toBe(fn);
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::Lambda::Function', 1);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: Match.stringLikeRegexp('^Mine') },
      BatchSize: 10,
    });
    expect(granting(template, 'dynamodb:GetRecords')).toHaveLength(1);
  });

  it('ships the three alarms, each on its metric and not breaching on missing data', () => {
    const { template, built } = processor({ iteratorAgeAlarmThreshold: Duration.minutes(2) });
    template.resourceCountIs('AWS::CloudWatch::Alarm', 3);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'IteratorAge',
      Namespace: 'AWS/Lambda',
      Statistic: 'Maximum',
      Threshold: 120_000,
      EvaluationPeriods: 5,
      TreatMissingData: 'notBreaching',
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'OnFailureDestinationDeliveredEventCount',
      Dimensions: [{ Name: 'EventSourceMappingUUID', Value: { Ref: Match.stringLikeRegexp('Mapping') } }],
      Threshold: 0,
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'DestinationDeliveryFailures',
      Statistic: 'Sum',
      Threshold: 0,
    });
    expect(Object.keys(built.alarms).sort()).toEqual([
      'destinationDeliveryFailures',
      'iteratorAge',
      'onFailureDeliveries',
    ]);
  });

  it('fails loudly on a typo, a bad value, or a table without a stream, naming the option', () => {
    const stack = newStack();
    const table = streamTable(stack);
    const code = inlineCode();
    const cases: [unknown, RegExp][] = [
      [{ table, function: { code }, batchsize: 10 }, /StreamProcessor: unknown option 'batchsize'/],
      [{ table, function: { code, handelr: 'x.y' } }, /StreamProcessor: unknown option 'function.handelr'/],
      [{ table, function: { code }, batchSize: 0 }, /option 'batchSize' must be an integer/],
      [
        { table, function: { code }, startingPosition: 'AT_TIMESTAMP' },
        /option 'startingPosition' must be one of/,
      ],
      [
        { table, function: { code }, onFailure: 'arn:aws:sqs:eu-west-1:1:q' },
        /option 'onFailure' must be an sqs.IQueue or an s3.IBucket/,
      ],
      [
        { table: dynamodb.Table.fromTableName(stack, 'NoStream', 'orders'), function: { code } },
        /option 'table' has no stream/,
      ],
      [{ table }, /option 'function' is required/],
    ];
    cases.forEach(([props, message], n) => {
      expect(() => new StreamProcessor(stack, `P${n}`, props as never)).toThrow(InvalidOptionsError);
      expect(() => new StreamProcessor(stack, `Q${n}`, props as never)).toThrow(message);
    });
  });
});
