import { GetObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { S3DeadLetterSink } from '../../../src/s3.js';
import { DEAD_LETTER_TYPE, DeadLetterSendError } from '../../../src/sinks/index.js';
import { createTestBucket, localClients } from '../../support/aws.js';
import { entry } from './dead-letter-entry.js';
import { listKeys } from './s3-helpers.js';

describe('S3DeadLetterSink against s3rver', () => {
  const { s3 } = localClients();

  it('stores one object per entry under a deterministic key; re-sending overwrites', async () => {
    const bucket = await createTestBucket(s3);
    const sink = new S3DeadLetterSink({ client: s3, bucket });
    const noIdentity = entry(5, {
      eventID: undefined,
      sequenceNumber: undefined,
      reason: 'malformed',
      record: { junk: true },
    });
    await sink.send([entry(1), entry(2), noIdentity], {});
    await sink.send([entry(1), noIdentity], {});
    const keys = await listKeys(s3, bucket);
    expect(keys).toHaveLength(3);
    expect(keys).toContain('dead-letter/reason=retries-exhausted/1001-ev-1.json');
    expect(keys.find((k) => k.startsWith('dead-letter/reason=malformed/'))).toMatch(
      /sha256-[0-9a-f]{32}\.json$/,
    );
    const object = await s3.send(
      new GetObjectCommand({ Bucket: bucket, Key: 'dead-letter/reason=retries-exhausted/1001-ev-1.json' }),
    );
    const body = JSON.parse(
      await (object.Body as { transformToString(): Promise<string> }).transformToString(),
    );
    expect(body).toMatchObject({
      type: DEAD_LETTER_TYPE,
      sequenceNumber: '1001',
      error: { message: 'boom' },
      attempts: 3,
    });
  });

  it('throws a DeadLetterSendError when the bucket does not exist', async () => {
    const sink = new S3DeadLetterSink({ client: s3, bucket: 'no-such-bucket-tidewater' });
    const error = await sink.send([entry(1)], {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeadLetterSendError);
    expect((error as DeadLetterSendError).sequenceNumbers).toEqual(['1001']);
  });
});
