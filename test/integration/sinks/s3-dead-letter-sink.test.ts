import { CreateBucketCommand, GetObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { S3DeadLetterSink } from '../../../src/s3.js';
import { DEAD_LETTER_TYPE } from '../../../src/sinks/dead-letter-message.js';
import { DeadLetterSendError } from '../../../src/sinks/index.js';
import { createTestBucket, localClients } from '../../support/aws.js';
import { entry } from './dead-letter-entry.js';
import { listKeys, s3ClientFor, startRecordingS3 } from './s3-helpers.js';

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

  it('stores a prefix of the entries: from the first failed PUT on, what was sent is deleted again', async () => {
    // Entry 3's PUT fails on every attempt; with 4 PUTs in flight, entries 4-6 may be stored
    // before it fails: they are removed again, and the error names entries 3 on.
    const { server, requests } = await startRecordingS3((req) =>
      req.method === 'PUT' && req.path.endsWith('/1003-ev-3.json')
        ? { status: 500, code: 'InternalError' }
        : undefined,
    );
    const client = s3ClientFor(server.endpoint, { maxAttempts: 2 });
    try {
      await client.send(new CreateBucketCommand({ Bucket: 'dead-letters' }));
      const sink = new S3DeadLetterSink({ client, bucket: 'dead-letters', concurrency: 4 });
      const entries = Array.from({ length: 12 }, (_, i) => entry(i));
      const error = await sink.send(entries, {}).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DeadLetterSendError);
      expect((error as DeadLetterSendError).sequenceNumbers).toEqual(
        entries.slice(3).map((e) => e.sequenceNumber),
      );
      expect(await listKeys(client, 'dead-letters')).toEqual(
        [0, 1, 2].map((i) => `dead-letter/reason=retries-exhausted/100${i}-ev-${i}.json`),
      );
      // Every entry from the failed one on whose PUT was sent (in flight when it failed, or the
      // failed one itself: a failed PUT may have landed) was deleted again.
      const number = (path: string) => Number(path.replace(/.*\/(\d+)-ev-\d+\.json$/, '$1'));
      const storedAfter = requests
        .filter((r) => r.method === 'PUT' && r.path.includes('/dead-letter/') && number(r.path) >= 1003)
        .map((r) => number(r.path));
      const deleted = requests.filter((r) => r.method === 'DELETE').map((r) => number(r.path));
      expect(deleted.sort()).toEqual([...new Set(storedAfter)].sort());
    } finally {
      client.destroy();
      await server.stop();
    }
  });

  it('a delete that fails is logged and the entry left; the error still names every entry from the failure on', async () => {
    const { server } = await startRecordingS3((req) => {
      if (req.method === 'DELETE') return { status: 403, code: 'AccessDenied' };
      if (req.method === 'PUT' && req.path.endsWith('/1000-ev-0.json'))
        return { status: 500, code: 'InternalError' };
      return undefined;
    });
    const client = s3ClientFor(server.endpoint, { maxAttempts: 1 });
    const warnings: object[] = [];
    const logger = {
      debug() {},
      info() {},
      error() {},
      warn: (fields: object) => void warnings.push(fields),
    };
    try {
      await client.send(new CreateBucketCommand({ Bucket: 'dead-letters' }));
      const sink = new S3DeadLetterSink({ client, bucket: 'dead-letters', concurrency: 2 });
      const error = await sink.send([entry(0), entry(1)], { logger }).catch((e: unknown) => e);
      expect((error as DeadLetterSendError).sequenceNumbers).toEqual(['1000', '1001']);
      // Entry 1's PUT started beside entry 0's and succeeded; the deletes of both were refused, and logged.
      const key = (i: number) => `dead-letter/reason=retries-exhausted/100${i}-ev-${i}.json`;
      expect(await listKeys(client, 'dead-letters')).toEqual([key(1)]);
      expect(warnings).toEqual([
        expect.objectContaining({ key: key(0), sink: 's3-dead-letter' }),
        expect.objectContaining({ key: key(1), sink: 's3-dead-letter' }),
      ]);
    } finally {
      client.destroy();
      await server.stop();
    }
  });

  it('stores an entry for a record nested too deep to serialize, its record cut at 100 levels', async () => {
    const bucket = await createTestBucket(s3);
    const sink = new S3DeadLetterSink({ client: s3, bucket });
    let deep: unknown = { S: 'leaf' };
    for (let i = 0; i < 20_000; i++) deep = { M: { n: deep } };
    const poison = entry(7, {
      reason: 'malformed',
      record: { eventID: 'ev-7', dynamodb: { OldImage: { a: deep } } },
    });
    await sink.send([poison], {});
    const object = await s3.send(
      new GetObjectCommand({ Bucket: bucket, Key: 'dead-letter/reason=malformed/1007-ev-7.json' }),
    );
    const text = await (object.Body as { transformToString(): Promise<string> }).transformToString();
    expect(text).toContain('[nested deeper than 100 levels: cut]');
    expect(JSON.parse(text)).toMatchObject({ reason: 'malformed', sequenceNumber: '1007' });
  });
});
