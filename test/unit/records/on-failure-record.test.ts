import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  NotAStreamEventError,
  OnFailureRecordError,
  parseStreamEvent,
  streamRecordsOf,
} from '../../../src/records/index.js';
import { DOCUMENTED } from '../../support/on-failure-record.js';

function thrown(input: unknown): unknown {
  try {
    parseStreamEvent(input);
  } catch (error) {
    return error;
  }
  throw new Error('parseStreamEvent accepted the input');
}

describe('parseStreamEvent on an on-failure record', () => {
  it('names the stream, shard and range and points at redrive, still a NotAStreamEventError', () => {
    const error = thrown(DOCUMENTED) as OnFailureRecordError;
    expect(error).toBeInstanceOf(OnFailureRecordError);
    expect(error).toBeInstanceOf(NotAStreamEventError);
    expect(error.name).toBe('OnFailureRecordError');
    expect(error).toMatchObject({
      streamArn: DOCUMENTED.DDBStreamBatchInfo.streamArn,
      shardId: DOCUMENTED.DDBStreamBatchInfo.shardId,
      startSequenceNumber: '700000000001111111111',
      endSequenceNumber: '700000000001111111113',
    });
    expect(error.message).toContain('tidewater redrive');
    expect(error.message).toContain(DOCUMENTED.DDBStreamBatchInfo.shardId);
  });

  it('recognizes an SQS event whose body is one, raw or inside an SNS notification, and an SNS event', () => {
    const body = JSON.stringify(DOCUMENTED);
    const sqs = { Records: [{ eventSource: 'aws:sqs', messageId: 'm-1', body }] };
    const viaSns = {
      Records: [{ eventSource: 'aws:sqs', body: JSON.stringify({ Type: 'Notification', Message: body }) }],
    };
    const sns = { Records: [{ EventSource: 'aws:sns', Sns: { Message: body } }] };
    for (const input of [sqs, viaSns, sns])
      expect(() => streamRecordsOf(input)).toThrow(OnFailureRecordError);
  });

  it('leaves other foreign input as it was: a plain NotAStreamEventError', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const error = thrown({ Records: [{ eventSource: 'aws:sqs', body: JSON.stringify(value) }] });
        expect((error as Error).name).toBe('NotAStreamEventError');
      }),
    );
    expect((thrown({ DDBStreamBatchInfo: { shardId: 1 } }) as Error).name).toBe('NotAStreamEventError');
  });
});
