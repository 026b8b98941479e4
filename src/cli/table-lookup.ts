import {
  DescribeTableCommand,
  type DescribeTableCommandOutput,
  type DynamoDBClient,
  ListTablesCommand,
  ResourceNotFoundException,
} from '@aws-sdk/client-dynamodb';
import { didYouMean } from '../core/did-you-mean.js';
import { NameNotFoundError } from './errors.js';

/** ListTables pages read for a suggestion (100 names each): enough for an account, bounded for any. */
const MAX_LIST_PAGES = 10;

/**
 * DescribeTable of a table the command line named. A table that does not exist is a
 * NameNotFoundError naming it and the endpoint's nearest tables, not the SDK's "Cannot do
 * operations on a non-existent table", which names neither.
 */
export async function describeNamedTable(
  dynamodb: DynamoDBClient,
  table: string,
  option: string,
): Promise<DescribeTableCommandOutput> {
  try {
    return await dynamodb.send(new DescribeTableCommand({ TableName: table }));
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
    const names = await tableNames(dynamodb);
    throw new NameNotFoundError(
      'table',
      table,
      `${option} ${table}: no such table${names.length === 0 ? ' (the endpoint has none)' : ''}.${didYouMean(table, names)}`,
    );
  }
}

async function tableNames(dynamodb: DynamoDBClient): Promise<string[]> {
  const names: string[] = [];
  let start: string | undefined;
  for (let page = 0; page < MAX_LIST_PAGES; page++) {
    const out = await dynamodb.send(new ListTablesCommand(start ? { ExclusiveStartTableName: start } : {}));
    names.push(...(out.TableNames ?? []));
    start = out.LastEvaluatedTableName;
    if (!start) break;
  }
  return names;
}
