import { describe, expect, it } from 'vitest';
import { StreamEventBuilder } from '../../../../src/local/emulator/events.js';
import { invocationRecord } from '../../../../src/local/emulator/invocation-record.js';
import { DOCUMENTED } from '../../../support/on-failure-record.js';

/** Every key path of a JSON value with the type at it: the shape, whatever the values. */
function shape(value: unknown, path = ''): string[] {
  if (typeof value !== 'object' || value === null) return [`${path}: ${typeof value}`];
  return Object.entries(value).flatMap(([key, v]) => shape(v, path ? `${path}.${key}` : key));
}

describe('the emulator writes what Lambda writes to an on-failure destination', () => {
  const builder = new StreamEventBuilder({ now: 1_767_323_040 });
  const records = [builder.insert({ pk: 'a' }), builder.insert({ pk: 'b' })];
  const written = invocationRecord({
    requestId: 'r-1',
    functionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:orders',
    shardId: 'shardId-1',
    streamArn: builder.streamArn,
    records,
    condition: 'RetryAttemptsExhausted',
    invocations: 1,
    functionError: 'Unhandled',
    now: 1_767_323_045_678,
  });

  it('field by field, in the documented order, with the documented types', () => {
    expect(shape(written)).toEqual(shape(DOCUMENTED));
    expect(JSON.stringify(Object.keys(written))).toBe(JSON.stringify(Object.keys(DOCUMENTED)));
  });

  it('times as the documented example writes them: the record with milliseconds, arrivals in whole seconds', () => {
    expect(written.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(written.DDBStreamBatchInfo.approximateArrivalOfFirstRecord).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
    );
    expect(written.DDBStreamBatchInfo).toMatchObject({
      startSequenceNumber: records[0]?.dynamodb.SequenceNumber,
      endSequenceNumber: records[1]?.dynamodb.SequenceNumber,
      batchSize: 2,
    });
  });
});
