import { describe, expect, it } from 'vitest';
import { kinesisArnStream, streamArnTable } from '../../../src/records/stream-arn-names.js';

describe('what a stream ARN written out names', () => {
  it('a DynamoDB stream ARN: its table; anything else: nothing', () => {
    expect(
      streamArnTable('arn:aws:dynamodb:eu-west-1:123456789012:table/orders/stream/2026-01-01T00:00:00.000'),
    ).toBe('orders');
    expect(streamArnTable('arn:aws:dynamodb:eu-west-1:123456789012:table/orders')).toBeUndefined();
    expect(streamArnTable('arn:aws:kinesis:eu-west-1:123456789012:stream/changes')).toBeUndefined();
  });

  it('a Kinesis stream ARN: its stream; anything else: nothing', () => {
    expect(kinesisArnStream('arn:aws:kinesis:eu-west-1:123456789012:stream/changes')).toBe('changes');
    expect(kinesisArnStream('arn:aws:dynamodb:eu-west-1:123456789012:table/orders')).toBeUndefined();
  });
});
