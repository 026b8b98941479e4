import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  RestoreObjectCommand,
  S3ServiceException,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestBucket } from '../../../support/aws.js';
import { startClockedS3 } from '../../../support/clocked-s3.js';
import { errorCodeOf, rawRequest } from './s3-sandbox.js';

// RestoreObject as the local S3 server emulates it, on a server whose clock the test moves: a
// restore is in progress, then done, then expired, without waiting.
const DAY = 86_400_000;
const DELAY = 60_000;
const START = Date.UTC(2026, 2, 1, 9, 30);

const local = await startClockedS3(DELAY, START);
const { server, s3, clock } = local;
afterAll(() => local.stop());

async function outcome(promise: Promise<{ $metadata: { httpStatusCode?: number } }>): Promise<string> {
  try {
    return `ok ${(await promise).$metadata.httpStatusCode}`;
  } catch (error) {
    if (error instanceof S3ServiceException) return `${error.name} ${error.$metadata.httpStatusCode}`;
    throw error;
  }
}

const restore = (bucket: string, key: string, days = 2, tier: 'Standard' | 'Bulk' | 'Expedited' = 'Bulk') =>
  s3.send(
    new RestoreObjectCommand({
      Bucket: bucket,
      Key: key,
      RestoreRequest: { Days: days, GlacierJobParameters: { Tier: tier } },
    }),
  );
const get = (bucket: string, key: string) => s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
const head = (bucket: string, key: string) => s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));

describe('local S3 server: archived objects and RestoreObject', () => {
  it.each(['GLACIER', 'DEEP_ARCHIVE'] as const)(
    'a %s object refuses GetObject until restored, then serves it until the restore expires',
    async (storageClass) => {
      clock.now = START;
      const bucket = await createTestBucket(s3);
      await s3.send(
        new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'cold', StorageClass: storageClass }),
      );
      expect(await outcome(get(bucket, 'k'))).toBe('InvalidObjectState 403');
      const before = await head(bucket, 'k');
      expect(before.StorageClass).toBe(storageClass);
      expect(before.Restore).toBeUndefined();
      const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
      expect(listed.Contents?.map((o) => o.StorageClass)).toEqual([storageClass]);

      expect(await outcome(restore(bucket, 'k'))).toBe('ok 202');
      expect((await head(bucket, 'k')).Restore).toBe('ongoing-request="true"');
      expect(await outcome(restore(bucket, 'k'))).toBe('RestoreAlreadyInProgress 409');
      expect(await outcome(get(bucket, 'k'))).toBe('InvalidObjectState 403');

      clock.now = START + DELAY;
      // Ready at 09:31 on March 1st; two days later, rounded up to midnight UTC: March 4th.
      const expiry = new Date(Date.UTC(2026, 2, 4)).toUTCString();
      const restored = await head(bucket, 'k');
      expect(restored.Restore).toBe(`ongoing-request="false", expiry-date="${expiry}"`);
      expect(restored.StorageClass).toBe(storageClass);
      const got = await get(bucket, 'k');
      expect(await got.Body?.transformToString()).toBe('cold');
      expect(got.Restore).toBe(restored.Restore);
      // Asked again once restored: 200, and the copy stays Days from now.
      clock.now = START + DAY;
      expect(await outcome(restore(bucket, 'k', 5))).toBe('ok 200');
      expect((await head(bucket, 'k')).Restore).toBe(
        `ongoing-request="false", expiry-date="${new Date(Date.UTC(2026, 2, 8)).toUTCString()}"`,
      );

      clock.now = Date.UTC(2026, 2, 8);
      expect(await outcome(get(bucket, 'k'))).toBe('InvalidObjectState 403');
      expect((await head(bucket, 'k')).Restore).toBeUndefined();
    },
  );

  it('restores nothing that is not archived, and nothing that does not exist', async () => {
    clock.now = START;
    const bucket = await createTestBucket(s3);
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'ir', Body: 'x', StorageClass: 'GLACIER_IR' }));
    expect(await outcome(restore(bucket, 'ir'))).toBe('InvalidObjectState 403');
    expect(await outcome(restore(bucket, 'missing'))).toBe('NoSuchKey 404');
    expect(await outcome(restore(`${bucket}-gone`, 'k'))).toBe('NoSuchBucket 404');
  });

  it('keeps the class of a completed multipart upload and of a copy, and refuses an unrestored copy source', async () => {
    clock.now = START;
    const bucket = await createTestBucket(s3);
    const { UploadId } = await s3.send(
      new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'mp', StorageClass: 'DEEP_ARCHIVE' }),
    );
    const part = await s3.send(
      new UploadPartCommand({ Bucket: bucket, Key: 'mp', UploadId, PartNumber: 1, Body: 'parts' }),
    );
    await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket,
        Key: 'mp',
        UploadId,
        MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] },
      }),
    );
    expect((await head(bucket, 'mp')).StorageClass).toBe('DEEP_ARCHIVE');
    expect(await outcome(get(bucket, 'mp'))).toBe('InvalidObjectState 403');

    const copy = (key: string) =>
      s3.send(
        new CopyObjectCommand({
          Bucket: bucket,
          Key: key,
          CopySource: `${bucket}/mp`,
          StorageClass: 'GLACIER',
        }),
      );
    expect(await outcome(copy('copied'))).toBe('InvalidObjectState 403');
    expect(await outcome(restore(bucket, 'mp'))).toBe('ok 202');
    clock.now = START + DELAY;
    expect(await outcome(copy('copied'))).toBe('ok 200');
    // The copy is a new GLACIER object: not restored, whatever its source was.
    const copied = await head(bucket, 'copied');
    expect([copied.StorageClass, copied.Restore]).toEqual(['GLACIER', undefined]);
    expect(await outcome(get(bucket, 'copied'))).toBe('InvalidObjectState 403');
    // Overwriting a restored object makes a new object, archived again.
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'mp', Body: 'new', StorageClass: 'GLACIER' }));
    expect(await outcome(get(bucket, 'mp'))).toBe('InvalidObjectState 403');
  });

  it('answers a bad or oversized RestoreRequest body with S3 errors, changing nothing', async () => {
    clock.now = START;
    const bucket = await createTestBucket(s3);
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'x', StorageClass: 'GLACIER' }));
    const post = (body: string) => rawRequest(server.endpoint, 'POST', `/${bucket}/k?restore`, {}, body);
    for (const body of [
      '',
      '<RestoreRequest/>',
      '<RestoreRequest><Days>0</Days></RestoreRequest>',
      '<RestoreRequest><Days>2</Days><GlacierJobParameters><Tier>Fast</Tier></GlacierJobParameters></RestoreRequest>',
      '<!DOCTYPE x [<!ENTITY e "1">]><RestoreRequest><Days>&e;</Days></RestoreRequest>',
    ]) {
      const answer = await post(body);
      expect([answer.status, errorCodeOf(answer.body)]).toEqual([400, 'MalformedXML']);
    }
    const select = await post('<RestoreRequest><Type>SELECT</Type></RestoreRequest>');
    expect([select.status, errorCodeOf(select.body)]).toEqual([501, 'NotImplemented']);
    const huge = await post(
      `<RestoreRequest><Description>${'x'.repeat(20_000)}</Description></RestoreRequest>`,
    );
    expect([huge.status, errorCodeOf(huge.body)]).toEqual([400, 'MaxMessageLengthExceeded']);
    expect((await head(bucket, 'k')).Restore).toBeUndefined();
    const good = await post(
      '<?xml version="1.0"?><RestoreRequest xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Days>1</Days><Tier>Expedited</Tier></RestoreRequest>',
    );
    expect(good.status).toBe(202);
    expect((await head(bucket, 'k')).Restore).toBe('ongoing-request="true"');
  });
});
