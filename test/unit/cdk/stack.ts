// The unit tests' CDK fixtures: a stack, a table with a stream, inline code, and readers of the
// synthesized template's IAM statements.

import type { Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { App, Stack } from 'aws-cdk-lib/core';

export function newStack(): Stack {
  return new Stack(new App(), 'Test', { env: { account: '111122223333', region: 'eu-west-1' } });
}

export function streamTable(stack: Stack, encryptionKey?: kms.IKey): dynamodb.Table {
  return new dynamodb.Table(stack, 'Table', {
    partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
    stream: dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
    timeToLiveAttribute: 'expiresAt',
    ...(encryptionKey === undefined
      ? {}
      : { encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED, encryptionKey }),
  });
}

/** A handler's code; the tests read the template, nothing runs it. */
export const inlineCode = (): lambda.Code =>
  lambda.Code.fromInline('exports.handler = async () => ({ batchItemFailures: [] });');

export interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

/** Every statement of every IAM policy in the template (AWS::IAM::Policy and roles' inline ones). */
export function iamStatements(template: Template): Statement[] {
  const out: Statement[] = [];
  for (const policy of Object.values(template.findResources('AWS::IAM::Policy')))
    out.push(...(policy.Properties.PolicyDocument.Statement as Statement[]));
  for (const role of Object.values(template.findResources('AWS::IAM::Role')))
    for (const inline of role.Properties.Policies ?? [])
      out.push(...(inline.PolicyDocument.Statement as Statement[]));
  return out;
}

export const actionsOf = (statement: Statement): string[] =>
  Array.isArray(statement.Action) ? statement.Action : [statement.Action];

/** The statements granting `action`. */
export function granting(template: Template, action: string): Statement[] {
  return iamStatements(template).filter((s) => actionsOf(s).includes(action));
}
