import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { KeySchemaUnknownError } from './errors.js';

/** The table name in a table ARN (`arn:aws:dynamodb:<region>:<account>:table/<name>`), or the name given. */
export function tableNameOf(tableOrArn: string): string {
  const at = tableOrArn.indexOf(':table/');
  if (at === -1) return tableOrArn;
  const rest = tableOrArn.slice(at + 7);
  const end = rest.indexOf('/');
  return end === -1 ? rest : rest.slice(0, end);
}

export interface TableKeys {
  /** Partition key, then sort key when the table has one. */
  readonly keyAttributes: readonly string[];
  readonly tableArn: string | undefined;
}

/** The table's key attributes and ARN, from DescribeTable (table name or ARN). */
export async function describeTableKeys(client: DynamoDBClient, tableOrArn: string): Promise<TableKeys> {
  const out = await client.send(new DescribeTableCommand({ TableName: tableOrArn }));
  const schema = out.Table?.KeySchema ?? [];
  const hash = schema.find((k) => k.KeyType === 'HASH')?.AttributeName;
  if (hash === undefined)
    throw new KeySchemaUnknownError(`table ${tableNameOf(tableOrArn)}: DescribeTable returned no key schema`);
  const range = schema.find((k) => k.KeyType === 'RANGE')?.AttributeName;
  return { keyAttributes: range === undefined ? [hash] : [hash, range], tableArn: out.Table?.TableArn };
}
