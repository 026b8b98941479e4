import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalNumberText } from '../../../src/records/number-canonical.js';
import { createTestTable, localClients } from '../../support/aws.js';
import { numberParts, spell, spellingChoices } from '../../support/number-spellings.js';

const { dynamodb } = localClients();

describe('canonicalNumberText against DynamoDB Local', () => {
  it('is the text DynamoDB gives back for a number written in any spelling', async () => {
    const table = await createTestTable(dynamodb);
    try {
      const samples = fc.sample(fc.tuple(numberParts, spellingChoices), { numRuns: 60, seed: 36 });
      const texts = [
        '1.50',
        '15E-1',
        '0.15e1',
        '-0',
        '1E+3',
        '-1.2300E-5',
        '007.10',
        '+5',
        '1E-130',
        '9.9E+125',
        ...samples.map(([v, s]) => spell(v, s)),
      ];
      for (const [i, text] of texts.entries()) {
        const Key = { pk: { S: `n${i}` } };
        await dynamodb.send(
          new PutItemCommand({ TableName: table.tableName, Item: { ...Key, n: { N: text } } }),
        );
        const stored = await dynamodb.send(
          new GetItemCommand({ TableName: table.tableName, Key, ConsistentRead: true }),
        );
        expect(canonicalNumberText(text), text).toBe(stored.Item?.n?.N);
      }
    } finally {
      await table.drop();
    }
  }, 60_000);
});
