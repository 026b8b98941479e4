import { describe, expect, it } from 'vitest';
import {
  compileFilterCriteria,
  filterPattern,
  forKinesis,
  InvalidPatternError,
  kinesisFilterInput,
  newImageAttribute,
  toFilterCriteria,
  ttlDeletes,
  userDeletes,
} from '../../../src/filters/index.js';
import { toKinesisRecord } from '../../../src/records/index.js';
import type { LambdaStreamRecord } from '../../../src/records/types.js';

const SEQ = '49657828409187701520019995242508390119953358325192589314';

function change(eventName: 'INSERT' | 'REMOVE', ttl: boolean, status = 'open'): LambdaStreamRecord {
  const image = { pk: { S: 'order#1' }, status: { S: status } };
  return {
    eventID: `e-${eventName}-${ttl}-${status}`,
    eventName,
    awsRegion: 'eu-west-1',
    ...(ttl ? { userIdentity: { type: 'Service', principalId: 'dynamodb.amazonaws.com' } } : {}),
    dynamodb: {
      ApproximateCreationDateTime: 1_795_330_000,
      Keys: { pk: { S: 'order#1' } },
      ...(eventName === 'REMOVE' ? { OldImage: image } : { NewImage: image }),
      SequenceNumber: '1',
    },
  };
}

const asKinesis = (record: LambdaStreamRecord) =>
  kinesisFilterInput(toKinesisRecord(record, { sequenceNumber: SEQ, tableName: 'Orders' }));

describe('filters for a Kinesis event source', () => {
  it('nest a stream pattern under data, the only key Lambda filters Kinesis records on', () => {
    expect(forKinesis(ttlDeletes())).toEqual({ data: ttlDeletes() });
    const criteria = toFilterCriteria(forKinesis([ttlDeletes(), userDeletes()]));
    expect(JSON.parse(criteria.Filters[0]!.Pattern)).toEqual({ data: ttlDeletes() });
  });

  it('the TTL-delete pattern takes exactly the TTL deletes of the decoded data, with the same evaluator', () => {
    const matches = compileFilterCriteria(toFilterCriteria(forKinesis(ttlDeletes())));
    expect(matches(asKinesis(change('REMOVE', true)))).toBe(true);
    expect(matches(asKinesis(change('REMOVE', false)))).toBe(false);
    expect(matches(asKinesis(change('INSERT', false)))).toBe(false);
    const users = compileFilterCriteria([forKinesis(userDeletes())]);
    expect(users(asKinesis(change('REMOVE', false)))).toBe(true);
    expect(users(asKinesis(change('REMOVE', true)))).toBe(false);
  });

  it('image conditions from the builder match on the decoded images', () => {
    const open = compileFilterCriteria([
      forKinesis(filterPattern(newImageAttribute('status').S.equals('open'))),
    ]);
    expect(open(asKinesis(change('INSERT', false, 'open')))).toBe(true);
    expect(open(asKinesis(change('INSERT', false, 'shipped')))).toBe(false);
  });

  it('refuse a pattern on a field the change record lacks; data that is not JSON matches no field pattern', () => {
    expect(() => forKinesis({ eventSourceARN: [{ prefix: 'arn:aws:dynamodb' }] })).toThrow(
      InvalidPatternError,
    );
    expect(() => forKinesis({ dynamodb: { StreamViewType: ['NEW_IMAGE'] } })).toThrow(
      /dynamodb.StreamViewType/,
    );
    const matches = compileFilterCriteria([forKinesis(ttlDeletes())]);
    expect(
      matches(kinesisFilterInput({ kinesis: { data: Buffer.from('plain text').toString('base64') } })),
    ).toBe(false);
  });
});
