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
