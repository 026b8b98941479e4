import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type S3Server, startS3Server } from '../../../../src/local/servers/s3-server.js';
import { listKeys, s3ClientFor } from '../../sinks/s3-helpers.js';

// The local S3 server under what S3 takes in its stride: keys that are no paths, listings that
// page, and PUT / DELETE / LIST of the same keys and folders at once.

let server: S3Server;
let client: S3Client;
let outside: string;
const BUCKET = 'concurrency';

beforeAll(async () => {
  outside = await mkdtemp(join(tmpdir(), 'tidewater-s3-outside-'));
  server = await startS3Server({ buckets: [BUCKET] });
  // One attempt: a 5xx the SDK would hide by retrying must show here.
  client = s3ClientFor(server.endpoint, { maxAttempts: 1 });
});

afterAll(async () => {
  client?.destroy();
  await server?.stop();
  await rm(outside, { recursive: true, force: true });
});

async function read(key: string, bucket = BUCKET): Promise<string> {
  const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return (await got.Body?.transformToString()) ?? '';
}

describe('keys are flat strings', () => {
  it('stores a key with ../ segments inside its directory, reads it back and lists it under its exact key', async () => {
    const key = `../../../../../..${outside}/ESCAPED1`;
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: 'escaped?' }));
    expect(await readdir(outside)).toEqual([]);
    expect(await read(key)).toBe('escaped?');
    expect(await listKeys(client, BUCKET, '../')).toEqual([key]);
    await client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: key }));
    expect(await listKeys(client, BUCKET, '../')).toEqual([]);
    expect(await readdir(outside)).toEqual([]);
  });

  it('keeps keys apart that one path would merge, and lists each as written', async () => {
    let run = 0;
    const segment = fc.constantFrom('.', '..', '%', '%2E', '%25', 'a', 'b.c', '\u00e9', '\u{1F600}');
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(
          fc.array(segment, { minLength: 2, maxLength: 4 }).map((s) => s.join('/')),
          { minLength: 1, maxLength: 6 },
        ),
        async (keys) => {
          // s3rver's router matches no key that starts or ends with '/' (a path segment of the
          // bucket or a folder marker): those stay untested here.
          const valid = keys.filter((k) => k !== '' && !k.startsWith('/') && !k.endsWith('/'));
          // A bucket per run: a failed run's objects must not show in the next one's listing.
          const bucket = `flat-keys-${run++}`;
          await client.send(new CreateBucketCommand({ Bucket: bucket }));
          for (const key of valid)
            await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: key }));
          for (const key of valid) expect(await read(key, bucket)).toBe(key);
          expect(await listKeys(client, bucket)).toEqual([...valid].sort());
          for (const key of valid) await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
          expect(await listKeys(client, bucket)).toEqual([]);
        },
      ),
      { numRuns: 15 },
    );
    expect(await readdir(outside)).toEqual([]);
  });
});

describe('listings', () => {
  it('pages a ListObjectsV2 listing with continuation tokens (s3rver made them with DES, which OpenSSL 3 refuses)', async () => {
    const keys = Array.from({ length: 7 }, (_, i) => `paged/k${i}`);
    await Promise.all(
      keys.map((Key) => client.send(new PutObjectCommand({ Bucket: BUCKET, Key, Body: Key }))),
    );
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await client.send(
        new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'paged/', MaxKeys: 3, ContinuationToken: token }),
      );
      pages++;
      for (const item of page.Contents ?? []) seen.push(item.Key!);
      expect(page.KeyCount).toBe(page.Contents?.length ?? 0);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
    expect(pages).toBe(3);
    expect(seen).toEqual(keys);
    const after = await client.send(
      new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'paged/', StartAfter: 'paged/k4' }),
    );
    expect(after.Contents?.map((c) => c.Key)).toEqual(['paged/k5', 'paged/k6']);
    expect(after.StartAfter).toBe('paged/k4');
  });

  it('refuses a continuation token it did not issue', async () => {
    await expect(
      client.send(new ListObjectsV2Command({ Bucket: BUCKET, ContinuationToken: 'bm90LW91cnM' })),
    ).rejects.toMatchObject({ name: 'InvalidArgument' });
  });
});

describe('concurrent requests', () => {
  it('answers every PUT, DELETE and LIST of the same keys in one folder at once without an error, as S3 does', async () => {
    const keys = Array.from({ length: 6 }, (_, i) => `busy/folder/deep/k${i}`);
    for (let round = 0; round < 12; round++) {
      const requests = keys.flatMap((Key, i) => [
        client.send(new PutObjectCommand({ Bucket: BUCKET, Key, Body: `${round}-${i}` })),
        client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key })),
        client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: `${Key}-never-written` })),
        client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'busy/' })),
        client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'busy/folder/', Delimiter: '/' })),
      ]);
      const settled = await Promise.allSettled(requests);
      const failed = settled.filter((s) => s.status === 'rejected');
      expect(failed.map((f) => String((f as PromiseRejectedResult).reason))).toEqual([]);
      for (const s of settled) {
        const status = (s as PromiseFulfilledResult<{ $metadata: { httpStatusCode?: number } }>).value
          .$metadata.httpStatusCode;
        expect([200, 204]).toContain(status);
      }
    }
    // Each key is either gone or holds a body its last round wrote.
    for (const key of await listKeys(client, BUCKET, 'busy/')) expect(await read(key)).toMatch(/^11-\d$/);
  });
});

describe('reads beside writes of the same key', () => {
  it('a GET or a listing during PUTs of the key sees one whole version, never half a file or a 500', async () => {
    const key = 'racing/object.json';
    // Large enough that writing one takes several chunks; each version's text names it.
    const version = (v: number) => JSON.stringify({ v, pad: String(v).repeat(200_000) });
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: version(0) }));
    const writes = Array.from({ length: 12 }, (_, i) =>
      client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: version(i + 1) })),
    );
    const reads = Array.from({ length: 24 }, () => read(key));
    const listings = Array.from({ length: 12 }, () => listKeys(client, BUCKET, 'racing/'));
    await Promise.all(writes);
    for (const body of await Promise.all(reads)) {
      const { v } = JSON.parse(body) as { v: number };
      expect(body).toBe(version(v));
    }
    for (const keys of await Promise.all(listings)) expect(keys).toEqual([key]);
    expect(await read(key)).toBe(version(12));
  });
});
