import type { LambdaStreamRecord } from '../../../src/records/types.js';

export const STREAM_ARN =
  'arn:aws:dynamodb:eu-west-1:123456789012:table/Orders/stream/2026-11-22T07:00:00.000';

/** A REMOVE by the TTL process, as Lambda delivers it. */
export function lambdaRecord(overrides: Partial<LambdaStreamRecord> = {}): LambdaStreamRecord {
  return {
    eventID: 'c81e728d9d4c2f636f067f89cc14862c',
    eventName: 'REMOVE',
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: 'eu-west-1',
    dynamodb: {
      ApproximateCreationDateTime: 1_795_330_000,
      Keys: { pk: { S: 'order#1' } },
      OldImage: {
        pk: { S: 'order#1' },
        total: { N: '12345678901234567890.123456789' },
        blob: { B: 'AAEC/w==' },
        expiresAt: { N: '1795329990' },
      },
      SequenceNumber: '4421584500000000017450439091',
      SizeBytes: 96,
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    },
    userIdentity: { type: 'Service', principalId: 'dynamodb.amazonaws.com' },
    eventSourceARN: STREAM_ARN,
    ...overrides,
  };
}

/** The same record as @aws-sdk/client-dynamodb-streams' GetRecords returns it. */
export function sdkRecord() {
  return {
    eventID: 'c81e728d9d4c2f636f067f89cc14862c',
    eventName: 'REMOVE' as const,
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: 'eu-west-1',
    dynamodb: {
      ApproximateCreationDateTime: new Date(1_795_330_000_000),
      Keys: { pk: { S: 'order#1' } },
      OldImage: {
        pk: { S: 'order#1' },
        total: { N: '12345678901234567890.123456789' },
        blob: { B: new Uint8Array([0, 1, 2, 255]) },
        expiresAt: { N: '1795329990' },
      },
      SequenceNumber: '4421584500000000017450439091',
      SizeBytes: 96,
      StreamViewType: 'NEW_AND_OLD_IMAGES' as const,
    },
    userIdentity: { Type: 'Service', PrincipalId: 'dynamodb.amazonaws.com' },
  };
}

/** The error `fn` throws (fails the test when it returns). */
export function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}
