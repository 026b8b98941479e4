import { createHmac } from 'node:crypto';
import { request } from 'node:http';
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
  S3ServiceException,
  StorageClass,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readArchive } from '../../../../src/archive.js';
import { LOCAL_CREDENTIALS } from '../../../../src/local/servers/dynamodb-local.js';
import { S3_STORAGE_CLASSES, type S3Server, startS3Server } from '../../../../src/local/servers/s3-server.js';
import { S3ArchiveSink } from '../../../../src/s3.js';
import { sampleTtlDeletes } from '../../../../src/sinks/sample-records.js';
import { createTestBucket, localClients } from '../../../support/aws.js';
import { s3ClientFor } from '../../sinks/s3-helpers.js';

/** The S3 error code a rejected promise carries (S3ServiceException.name), or 'resolved'. */
async function errorCode(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'resolved';
  } catch (error) {
    if (error instanceof S3ServiceException) return `${error.name} ${error.$metadata.httpStatusCode}`;
    throw error;
  }
}

async function body(s3: S3Client, bucket: string, key: string): Promise<string> {
  const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return (await got.Body?.transformToString()) ?? '';
}

async function listedClasses(s3: S3Client, bucket: string): Promise<Record<string, string | undefined>> {
  const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
  return Object.fromEntries((page.Contents ?? []).map((o) => [o.Key, o.StorageClass]));
}

/** One raw, unsigned HTTP request (s3rver serves anonymous requests); resolves with status and body. */
function rawRequest(
  endpoint: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  payload: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${endpoint}${path}`, { method, headers }, (res) => {
      let data = '';
      res.on('data', (chunk) => {
        data += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

describe('local S3 server: storage classes', () => {
  const { s3, s3Endpoint } = localClients();
  afterAll(() => s3.destroy());

  it('knows every storage class of the S3 API model (the SDK enum)', () => {
    expect([...S3_STORAGE_CLASSES].sort()).toEqual(Object.values(StorageClass).sort());
  });

  it.each(Object.values(StorageClass))(
    'PutObject in %s succeeds and HeadObject, GetObject (once restored) and ListObjectsV2 report the class',
    async (storageClass) => {
      const bucket = await createTestBucket(s3);
      await s3.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: 'k',
          Body: `in ${storageClass}`,
          StorageClass: storageClass,
        }),
      );
      // S3 sends x-amz-storage-class for every class except STANDARD.
      const reported = storageClass === 'STANDARD' ? undefined : storageClass;
      const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'k' }));
      expect(head.StorageClass).toBe(reported);
      const got = s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'k' }));
      if (storageClass === 'GLACIER' || storageClass === 'DEEP_ARCHIVE') {
        // As S3: readable only once restored (s3-server.restore.test.ts).
        expect(await errorCode(got)).toBe('InvalidObjectState 403');
      } else {
        expect((await got).StorageClass).toBe(reported);
        expect(await (await got).Body?.transformToString()).toBe(`in ${storageClass}`);
      }
      expect(await listedClasses(s3, bucket)).toEqual({ k: storageClass });
    },
  );

  it('an object written without a class is STANDARD: no header on HEAD, STANDARD in both listings', async () => {
    const bucket = await createTestBucket(s3);
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'plain', Body: 'x' }));
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'ir', Body: 'x', StorageClass: 'GLACIER_IR' }));
    expect(
      (await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'plain' }))).StorageClass,
    ).toBeUndefined();
    expect(await listedClasses(s3, bucket)).toEqual({ plain: 'STANDARD', ir: 'GLACIER_IR' });
    const v1 = await s3.send(new ListObjectsCommand({ Bucket: bucket }));
    expect(Object.fromEntries((v1.Contents ?? []).map((o) => [o.Key, o.StorageClass]))).toEqual({
      plain: 'STANDARD',
      ir: 'GLACIER_IR',
    });
  });

  it('overwriting an object replaces its class, STANDARD included', async () => {
    const bucket = await createTestBucket(s3);
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'a', StorageClass: 'GLACIER_IR' }));
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'b' }));
    expect((await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'k' }))).StorageClass).toBeUndefined();
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'c', StorageClass: 'SNOW' }));
    expect((await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'k' }))).StorageClass).toBe('SNOW');
  });

  it.each(['COLD', 'glacier_ir', 'GLACIER-IR', 'Standard'])(
    'PutObject in %j fails with 400 InvalidStorageClass and stores nothing',
    async (storageClass) => {
      const bucket = await createTestBucket(s3);
      const put = s3.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: 'k',
          Body: 'x',
          StorageClass: storageClass as StorageClass,
        }),
      );
      expect(await errorCode(put)).toBe('InvalidStorageClass 400');
      expect(await errorCode(s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'k' })))).toBe(
        'NotFound 404',
      );
    },
  );

  it("answers an invalid class with S3's error body, naming the class requested", async () => {
    const bucket = await createTestBucket(s3);
    const answer = await rawRequest(
      s3Endpoint,
      'PUT',
      `/${bucket}/k`,
      { 'x-amz-storage-class': 'COLD' },
      'x',
    );
    expect(answer.status).toBe(400);
    expect(answer.body).toContain('<Code>InvalidStorageClass</Code>');
    expect(answer.body).toContain('<Message>The storage class you specified is not valid</Message>');
    expect(answer.body).toContain('<StorageClassRequested>COLD</StorageClassRequested>');
  });

  it('leaves a class s3rver knows in the request, so a SigV2 signature over it still matches', async () => {
    const bucket = await createTestBucket(s3);
    // s3rver checks SigV2 (not SigV4). Its string to sign for the Authorization header has an
    // empty date line; the x-amz-* headers are in it, so removing one would break the signature.
    const headers = { 'content-type': 'text/plain', 'x-amz-storage-class': 'GLACIER' };
    const stringToSign = [
      'PUT',
      '',
      headers['content-type'],
      '',
      'x-amz-storage-class:GLACIER',
      `/${bucket}/v2`,
    ];
    const signature = createHmac('sha1', LOCAL_CREDENTIALS.secretAccessKey)
      .update(stringToSign.join('\n'))
      .digest('base64');
    const put = await rawRequest(
      s3Endpoint,
      'PUT',
      `/${bucket}/v2`,
      {
        ...headers,
        date: new Date().toUTCString(),
        authorization: `AWS ${LOCAL_CREDENTIALS.accessKeyId}:${signature}`,
      },
      'v2',
    );
    expect(put).toEqual({ status: 200, body: '' });
    expect((await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'v2' }))).StorageClass).toBe(
      'GLACIER',
    );
  });

  it('takes x-amz-storage-class from the query string too (presigned URLs carry it there)', async () => {
    const bucket = await createTestBucket(s3);
    const put = await rawRequest(s3Endpoint, 'PUT', `/${bucket}/q?x-amz-storage-class=GLACIER_IR`, {}, 'q');
    expect(put.status).toBe(200);
    expect((await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'q' }))).StorageClass).toBe(
      'GLACIER_IR',
    );
    const bad = await rawRequest(s3Endpoint, 'PUT', `/${bucket}/r?x-amz-storage-class=COLD`, {}, 'r');
    expect(bad.status).toBe(400);
    expect(bad.body).toContain('<Code>InvalidStorageClass</Code>');
  });

  it('a multipart upload keeps the class given to CreateMultipartUpload; an invalid one is refused there', async () => {
    const bucket = await createTestBucket(s3);
    const created = await s3.send(
      new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'mp', StorageClass: 'GLACIER_IR' }),
    );
    const part = await s3.send(
      new UploadPartCommand({
        Bucket: bucket,
        Key: 'mp',
        UploadId: created.UploadId,
        PartNumber: 1,
        Body: 'one part',
      }),
    );
    await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket,
        Key: 'mp',
        UploadId: created.UploadId,
        MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] },
      }),
    );
    expect((await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'mp' }))).StorageClass).toBe(
      'GLACIER_IR',
    );
    expect(await body(s3, bucket, 'mp')).toBe('one part');
    expect(await listedClasses(s3, bucket)).toEqual({ mp: 'GLACIER_IR' });
    const invalid = s3.send(
      new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'bad', StorageClass: 'COLD' as StorageClass }),
    );
    expect(await errorCode(invalid)).toBe('InvalidStorageClass 400');
  });

  it('CopyObject stores the class asked for, STANDARD when none is (not the source class)', async () => {
    const bucket = await createTestBucket(s3);
    await s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: 'src', Body: 'copied', StorageClass: 'GLACIER_IR' }),
    );
    const source = `${bucket}/src`;
    await s3.send(new CopyObjectCommand({ Bucket: bucket, Key: 'plain', CopySource: source }));
    await s3.send(
      new CopyObjectCommand({ Bucket: bucket, Key: 'ia', CopySource: source, StorageClass: 'ONEZONE_IA' }),
    );
    await s3.send(
      new CopyObjectCommand({
        Bucket: bucket,
        Key: 'replaced',
        CopySource: source,
        MetadataDirective: 'REPLACE',
        Metadata: { note: 'new' },
        StorageClass: 'EXPRESS_ONEZONE',
      }),
    );
    expect(await listedClasses(s3, bucket)).toEqual({
      src: 'GLACIER_IR',
      plain: 'STANDARD',
      ia: 'ONEZONE_IA',
      replaced: 'EXPRESS_ONEZONE',
    });
    const replaced = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'replaced' }));
    expect(replaced.StorageClass).toBe('EXPRESS_ONEZONE');
    expect(replaced.Metadata).toEqual({ note: 'new' });
    expect(await body(s3, bucket, 'ia')).toBe('copied');
    const invalid = s3.send(
      new CopyObjectCommand({
        Bucket: bucket,
        Key: 'bad',
        CopySource: source,
        StorageClass: 'COLD' as StorageClass,
      }),
    );
    expect(await errorCode(invalid)).toBe('InvalidStorageClass 400');
  });

  it('copying an object onto itself with a storage class changes its class and keeps body and metadata', async () => {
    const bucket = await createTestBucket(s3);
    await s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: 'self',
        Body: 'same',
        Metadata: { a: '1' },
        ContentType: 'text/x',
      }),
    );
    const before = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'self' }));
    const copied = await s3.send(
      new CopyObjectCommand({
        Bucket: bucket,
        Key: 'self',
        CopySource: `${bucket}/self`,
        StorageClass: 'GLACIER_IR',
      }),
    );
    expect(copied.CopyObjectResult?.ETag).toBe(before.ETag);
    const after = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'self' }));
    expect(after).toMatchObject({ StorageClass: 'GLACIER_IR', Metadata: { a: '1' }, ContentType: 'text/x' });
    expect(await body(s3, bucket, 'self')).toBe('same');
    // Without a class (or another change) S3 refuses a copy onto itself; so does the local server.
    const unchanged = s3.send(
      new CopyObjectCommand({ Bucket: bucket, Key: 'self', CopySource: `${bucket}/self` }),
    );
    expect(await errorCode(unchanged)).toBe('InvalidRequest 400');
  });

  it("an S3ArchiveSink with storageClass 'GLACIER_IR' archives locally and the archive reads back", async () => {
    const bucket = await createTestBucket(s3);
    const sink = new S3ArchiveSink({ client: s3, bucket, storageClass: 'GLACIER_IR' });
    const batch = sampleTtlDeletes(6);
    expect(await sink.write(batch, {})).toEqual({});
    const classes = Object.values(await listedClasses(s3, bucket));
    expect(classes).toEqual(['GLACIER_IR']);
    const back = [];
    for await (const record of readArchive({
      client: s3,
      bucket,
      table: 'archive-sample',
      from: '2026-01-01T00:00:00Z',
      to: '2026-02-01T00:00:00Z',
    })) {
      back.push(record.sequenceNumber);
    }
    expect(back).toEqual(batch.map((r) => r.sequenceNumber));
  });
});

describe('local S3 server: conditional writes (If-None-Match: *)', () => {
  const { s3 } = localClients();
  afterAll(() => s3.destroy());

  it('creates a new key and answers 412 PreconditionFailed once it exists, leaving it unchanged', async () => {
    const bucket = await createTestBucket(s3);
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'first', IfNoneMatch: '*' }));
    const again = s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'second', IfNoneMatch: '*' }),
    );
    expect(await errorCode(again)).toBe('PreconditionFailed 412');
    expect(await body(s3, bucket, 'k')).toBe('first');
    // Without the header the write goes through, as on S3.
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'third' }));
    expect(await body(s3, bucket, 'k')).toBe('third');
  });

  it('lets exactly one of several concurrent conditional writes of one key succeed', async () => {
    const bucket = await createTestBucket(s3);
    const bodies = ['a', 'b', 'c', 'd', 'e'];
    const results = await Promise.allSettled(
      bodies.map((b) =>
        s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'race', Body: b, IfNoneMatch: '*' })),
      ),
    );
    const won = bodies.filter((_, i) => results[i]?.status === 'fulfilled');
    expect(won).toHaveLength(1);
    for (const result of results) {
      if (result.status === 'rejected') expect((result.reason as Error).name).toBe('PreconditionFailed');
    }
    expect(await body(s3, bucket, 'race')).toBe(won[0]);
  });

  it('CompleteMultipartUpload with If-None-Match: * answers 412 when the key exists', async () => {
    const bucket = await createTestBucket(s3);
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'mp', Body: 'existing' }));
    const created = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'mp' }));
    const part = await s3.send(
      new UploadPartCommand({
        Bucket: bucket,
        Key: 'mp',
        UploadId: created.UploadId,
        PartNumber: 1,
        Body: 'new',
      }),
    );
    const complete = s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket,
        Key: 'mp',
        UploadId: created.UploadId,
        IfNoneMatch: '*',
        MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] },
      }),
    );
    expect(await errorCode(complete)).toBe('PreconditionFailed 412');
    expect(await body(s3, bucket, 'mp')).toBe('existing');
  });

  it("answers the archive sink's redelivery 412, which it counts as written, and never rewrites the object", async () => {
    const bucket = await createTestBucket(s3);
    const sink = new S3ArchiveSink({ client: s3, bucket });
    const batch = sampleTtlDeletes(4);
    expect(await sink.write(batch, {})).toEqual({});
    const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
    const key = page.Contents?.[0]?.Key as string;
    // Other bytes under the key show whether the redelivered PUT overwrote it.
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'already here' }));
    expect(await sink.write(batch, {})).toEqual({});
    expect(await body(s3, bucket, key)).toBe('already here');
  });
});

describe('local S3 server: an upload the client aborts stores nothing', () => {
  let server: S3Server;
  let s3: S3Client;
  /** Resolves when the server has seen the request of `path` close (the client went away). */
  const closed = new Map<string, () => void>();
  const whenClosed = (path: string) => new Promise<void>((resolve) => closed.set(path, resolve));

  beforeAll(async () => {
    server = await startS3Server({
      middleware: [
        async (ctx, next) => {
          const done = closed.get(ctx.path);
          if (done) (ctx as unknown as { req: NodeJS.ReadableStream }).req.on('close', done);
          await next();
        },
      ],
    });
    s3 = s3ClientFor(server.endpoint);
  });
  afterAll(async () => {
    s3.destroy();
    await server.stop();
  });

  /** Sends the headers for a 1000-byte body, 10 bytes of it, then drops the connection. */
  async function abortedPut(bucket: string, key: string): Promise<void> {
    const seen = whenClosed(`/${bucket}/${key}`);
    await new Promise<void>((resolve) => {
      const req = request(`${server.endpoint}/${bucket}/${key}`, {
        method: 'PUT',
        headers: { 'content-length': '1000', 'x-amz-meta-state': 'partial' },
      });
      req.on('error', () => resolve());
      req.write(Buffer.alloc(10, 1), () => req.destroy());
    });
    await seen;
  }

  it('a new key stays absent', async () => {
    const bucket = await createTestBucket(s3);
    await abortedPut(bucket, 'new');
    expect(await errorCode(s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'new' })))).toBe(
      'NotFound 404',
    );
    expect(await listedClasses(s3, bucket)).toEqual({});
  });

  it('an existing key keeps its previous body and metadata', async () => {
    const bucket = await createTestBucket(s3);
    await s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: 'old', Body: 'previous', Metadata: { state: 'whole' } }),
    );
    const before = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'old' }));
    await abortedPut(bucket, 'old');
    const after = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'old' }));
    expect(after).toMatchObject({ ETag: before.ETag, ContentLength: 8, Metadata: { state: 'whole' } });
    expect(await body(s3, bucket, 'old')).toBe('previous');
  });
});
