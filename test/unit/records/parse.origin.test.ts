import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import { createRecordParser, parseStreamRecord } from '../../../src/records/index.js';
import { lambdaRecord } from './fixtures.js';

describe('record origin', () => {
  it('is a DynamoDB stream unless the parser is told otherwise', () => {
    const record = parseStreamRecord(lambdaRecord());
    expect(record.origin).toEqual({ source: 'dynamodb-stream' });
    expect(JSON.parse(JSON.stringify(record)).origin).toEqual({ source: 'dynamodb-stream' });
  });

  it('carries a backfill origin, frozen, on every record of that parser', () => {
    const origin = { source: 'backfill', from: 'export', snapshotTime: 1_700_000_000_000 } as const;
    const parse = createRecordParser({ origin });
    const [a, b] = [parse(lambdaRecord()), parse(lambdaRecord())];
    expect(a.origin).toEqual(origin);
    expect(b.origin).toBe(a.origin);
    expect(Object.isFrozen(a.origin)).toBe(true);
  });

  it('refuses an origin it does not know', () => {
    expect(() =>
      createRecordParser({ origin: { source: 'backfill', from: 'tape', snapshotTime: 1 } as never }),
    ).toThrow(InvalidOptionsError);
    expect(() => createRecordParser({ origin: { source: 'backfill', from: 'scan' } as never })).toThrow(
      /origin/,
    );
  });
});
