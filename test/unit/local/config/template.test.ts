import { describe, expect, it } from 'vitest';
import { InfraDefinitionError } from '../../../../src/local/config/errors.js';
import { planTemplateResources } from '../../../../src/local/config/template.js';

// infra/parameters.yml: settings as stack parameters. A deploy passes no values, so the Defaults
// are what deploys, and the local plan must take them the same way.

const options = { service: 'svc', stage: 'dev' };
const table = (name: unknown) => ({
  Type: 'AWS::DynamoDB::Table',
  Properties: {
    TableName: name,
    AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
  },
});

describe('Parameters', () => {
  // A parameter read by a condition in another part, and by the resource through that condition.
  const tableNames = (name: string) =>
    planTemplateResources(
      [
        { Parameters: { Named: { Type: 'String', Default: name } } },
        {
          Conditions: { HasName: { 'Fn::Not': [{ 'Fn::Equals': [{ Ref: 'Named' }, ''] }] } },
          Resources: { Table: table({ 'Fn::If': ['HasName', { Ref: 'Named' }, { Ref: 'AWS::NoValue' }] }) },
        },
      ],
      options,
    ).tables.map((t) => t.createTable.TableName);

  it('a Ref to a parameter, in a resource or a condition of any part, is its Default', () => {
    expect(tableNames('orders')).toEqual(['orders']);
    // No TableName: the name CloudFormation would generate, stable locally.
    expect(tableNames('')).toEqual(['svc-dev-Table']);
  });

  it('a parameter without a Default is an InfraDefinitionError naming it', () => {
    const attempt = () =>
      planTemplateResources(
        [{ Parameters: { KeyArn: { Type: 'String' } }, Resources: { Table: table({ Ref: 'KeyArn' }) } }],
        options,
      );
    expect(attempt).toThrow(InfraDefinitionError);
    expect(attempt).toThrow('parameter KeyArn has no Default');
  });
});

describe('AWS::DynamoDB::GlobalTable (CDK TableV2)', () => {
  const global = (properties: Record<string, unknown>) => ({
    Resources: {
      Changes: { Type: 'AWS::Kinesis::Stream', Properties: { ShardCount: 1 } },
      Orders: {
        Type: 'AWS::DynamoDB::GlobalTable',
        Properties: {
          AttributeDefinitions: [
            { AttributeName: 'pk', AttributeType: 'S' },
            { AttributeName: 'status', AttributeType: 'S' },
          ],
          KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
          StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
          TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
          ...properties,
        },
      },
    },
  });

  it("is one local table: the stack region's replica gives the Kinesis destination, the rest is listed as not emulated", () => {
    const plan = planTemplateResources(
      global({
        BillingMode: 'PROVISIONED',
        WriteProvisionedThroughputSettings: {
          WriteCapacityAutoScalingSettings: { MinCapacity: 1, MaxCapacity: 10 },
        },
        GlobalSecondaryIndexes: [
          {
            IndexName: 'byStatus',
            KeySchema: [{ AttributeName: 'status', KeyType: 'HASH' }],
            Projection: { ProjectionType: 'KEYS_ONLY' },
            WriteProvisionedThroughputSettings: { WriteCapacityAutoScalingSettings: { MinCapacity: 1 } },
          },
        ],
        Replicas: [
          { Region: 'eu-west-1', PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } },
          {
            Region: { Ref: 'AWS::Region' },
            DeletionProtectionEnabled: true,
            KinesisStreamSpecification: { StreamArn: { 'Fn::GetAtt': ['Changes', 'Arn'] } },
          },
        ],
      }),
      options,
    );
    const [orders] = plan.tables;
    expect(orders?.type).toBe('AWS::DynamoDB::GlobalTable');
    expect(orders?.createTable).toEqual({
      TableName: 'svc-dev-Orders',
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'status', AttributeType: 'S' },
      ],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
      GlobalSecondaryIndexes: [
        {
          IndexName: 'byStatus',
          KeySchema: [{ AttributeName: 'status', KeyType: 'HASH' }],
          Projection: { ProjectionType: 'KEYS_ONLY' },
        },
      ],
    });
    expect(orders?.ttlAttribute).toBe('expiresAt');
    expect(orders?.kinesisDestination).toEqual({
      streamArn: plan.kinesisStreams[0]?.arn,
      precision: 'MILLISECOND',
    });
    expect(plan.notEmulated).toEqual(
      expect.arrayContaining([
        'Orders.WriteProvisionedThroughputSettings',
        'Orders.Replicas[0] (eu-west-1)',
        'Orders.Replicas[1].DeletionProtectionEnabled',
        'Orders.BillingMode (PROVISIONED: on demand locally)',
      ]),
    );
  });

  it('without a replica in the stack region the first one stands for the table; without Replicas, no destination', () => {
    const elsewhere = planTemplateResources(
      global({
        Replicas: [
          {
            Region: 'ap-south-1',
            KinesisStreamSpecification: { StreamArn: { 'Fn::GetAtt': ['Changes', 'Arn'] } },
          },
        ],
      }),
      options,
    );
    expect(elsewhere.tables[0]?.kinesisDestination?.streamArn).toBe(elsewhere.kinesisStreams[0]?.arn);
    const bare = planTemplateResources(global({}), options);
    expect(bare.tables[0]?.kinesisDestination).toBeUndefined();
    expect(bare.tables[0]?.createTable.BillingMode).toBe('PAY_PER_REQUEST');
  });
});
