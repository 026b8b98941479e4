import { CreateMultipartUploadCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3ClientFor } from '../../sinks/s3-helpers.js';
import { type RawAnswer, rawRequest, type S3Sandbox, startS3Sandbox } from './s3-sandbox.js';

// Random and hostile requests, sent over HTTP to a local S3 server in a sandbox: the server
// answers every one, still serves a listing afterwards, and nothing appears, changes or goes
// outside its directory (the sandbox's canary folder is its sibling).
const BUCKET = 'fuzzed';
const RUNS = 300;
const REQUEST_TIMEOUT_MS = 5_000;

let sandbox: S3Sandbox;
let s3: S3Client;
let uploadId: string;
beforeAll(async () => {
  sandbox = await startS3Sandbox([BUCKET]);
  s3 = s3ClientFor(sandbox.server.endpoint);
  await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'dir/object', Body: 'x' }));
  await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'cold', Body: 'x', StorageClass: 'GLACIER' }));
  uploadId = (await s3.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'up' }))).UploadId ?? '';
});
afterAll(async () => {
  s3.destroy();
  await sandbox.stop();
});

/** encodeURIComponent, with a lone surrogate (which it refuses) sent as the byte %FF. */
function escapeAll(text: string): string {
  return text.replace(/[\s\S]/gu, (c) => {
    try {
      return encodeURIComponent(c);
    } catch {
      return '%FF';
    }
  });
}

const hostileText = fc.oneof(
  fc.constantFrom(
    '..',
    '.',
    '',
    '../..',
    '..%2F..',
    '%2E%2E',
    '%00',
    '%ZZ',
    '/',
    '//',
    'canary',
    '__proto__',
    '~',
  ),
  fc.string({ maxLength: 12 }),
);
const segment = fc.oneof(
  hostileText,
  hostileText.map(escapeAll),
  fc.string({ unit: 'grapheme', maxLength: 8 }).map((text) => encodeURIComponent(text)),
  fc.string({ maxLength: 8 }), // raw: lone surrogates and spaces included, escaped when sent
);
const bucket = fc.oneof(fc.constant(BUCKET), segment, fc.constant('FUZZED'));
const path = fc
  .tuple(bucket, fc.array(segment, { maxLength: 4 }), fc.boolean())
  .map(([b, keys, slash]) => `/${[b, ...keys].join('/')}${slash ? '/' : ''}`);

const queryName = fc.constantFrom(
  'uploadId',
  'partNumber',
  'uploads',
  'delete',
  'cors',
  'website',
  'tagging',
  'acl',
  'list-type',
  'continuation-token',
  'x-amz-storage-class',
  'versionId',
  'select',
  'location',
  'restore',
);
const queryValue = fc.oneof(
  fc.constant(''),
  hostileText,
  fc.constantFrom('1', '0', '10001', '-1', '2'),
  fc.constant('UPLOAD'), // replaced by the real upload id
);
const query = fc
  .array(fc.tuple(queryName, fc.option(queryValue, { nil: undefined })), { maxLength: 3 })
  .map((pairs) =>
    pairs.length === 0
      ? ''
      : `?${pairs.map(([n, v]) => (v === undefined ? n : `${n}=${encodeURIComponent(v)}`)).join('&')}`,
  );

const boundary = 'XyZ';
const header = fc.oneof(
  fc.constant(['content-type', `multipart/form-data; boundary=${boundary}`] as const),
  fc.constant(['content-type', 'application/xml'] as const),
  fc.tuple(
    fc.constant('x-amz-copy-source'),
    hostileText.map((t) => `/${BUCKET}/${encodeURIComponent(t)}`),
  ),
  fc.tuple(fc.constant('x-amz-storage-class'), fc.constantFrom('GLACIER', 'COLD', '', 'SNOW')),
  fc.constant(['if-none-match', '*'] as const),
  fc.tuple(
    fc.constant('host'),
    fc.constantFrom('..s3.amazonaws.com', 'x.s3.amazonaws.com', '..', 'canary', 'localhost'),
  ),
  fc.tuple(
    fc.constant('authorization'),
    fc.constantFrom('AWS S3RVER:x', 'AWS4-HMAC-SHA256 Credential=S3RVER/x', 'junk'),
  ),
  fc.tuple(fc.constant('range'), fc.constantFrom('bytes=0-0', 'bytes=5-1', 'bytes=x')),
  fc.tuple(fc.constant('x-amz-metadata-directive'), fc.constantFrom('REPLACE', 'COPY', 'x')),
);
const headers = fc.array(header, { maxLength: 4 });

const body = fc.oneof(
  fc.constant(''),
  fc.string({ maxLength: 200 }),
  fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
  // dicer's crash (mscdex/dicer#22) and its relatives
  fc.constant(`--${boundary}\r\n Content-Disposition: form-data; name="x"\r\n\r\n\r\n--${boundary}--`),
  fc.constant(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nunterminated`,
  ),
  fc.constantFrom(
    '<!DOCTYPE d [<!ENTITY e "x">]><Delete><Object><Key>&e;</Key></Object></Delete>',
    '<Delete><Object><Key>../../canary/inner/file</Key></Object></Delete>',
    '<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"x"</ETag></Part></CompleteMultipartUpload>',
    '<__proto__><polluted>yes</polluted></__proto__>',
    '<Tagging><TagSet><Tag><Key>__proto__</Key><Value>x</Value></Tag></TagSet></Tagging>',
    '<RestoreRequest><Days>1</Days><GlacierJobParameters><Tier>Bulk</Tier></GlacierJobParameters></RestoreRequest>',
    '<RestoreRequest><Days>99999999999999999999</Days></RestoreRequest>',
    '<RestoreRequest><Days>1</Days><Days>2</Days></RestoreRequest>',
    '<RestoreRequest><Type>SELECT</Type><SelectParameters/></RestoreRequest>',
  ),
);
const method = fc.constantFrom('GET', 'PUT', 'POST', 'DELETE', 'HEAD', 'OPTIONS', 'PATCH');

interface FuzzRequest {
  method: string;
  target: string;
  headers: (readonly [string, string])[];
  body: string | Buffer;
}

const random: fc.Arbitrary<FuzzRequest> = fc
  .tuple(method, path, query, headers, body)
  .map(([m, p, q, h, b]) => ({ method: m, target: `${p}${q}`, headers: h, body: b }));

/** Requests of the shapes that reached s3rver's filesystem and parsers, with random parts. */
const shaped: fc.Arbitrary<FuzzRequest> = fc.oneof(
  fc
    .tuple(
      fc.oneof(hostileText, fc.constant('UPLOAD')),
      fc.oneof(fc.constantFrom('1', '2'), hostileText),
      body,
    )
    .map(([id, part, b]) => ({
      method: 'PUT',
      target: `/${BUCKET}/key?partNumber=${encodeURIComponent(part)}&uploadId=${encodeURIComponent(id)}`,
      headers: [],
      body: b,
    })),
  fc.tuple(fc.oneof(hostileText, fc.constant('UPLOAD')), body).map(([id, b]) => ({
    method: 'POST',
    target: `/${BUCKET}/key?uploadId=${encodeURIComponent(id)}`,
    headers: [],
    body: b,
  })),
  fc.tuple(segment, segment, body).map(([b, k, payload]) => ({
    method: 'PUT',
    target: `/${b}/${k}`,
    headers: [],
    body: payload,
  })),
  fc.tuple(fc.oneof(fc.constant(''), query), body).map(([q, b]) => ({
    method: 'POST',
    target: `/${BUCKET}${q}`,
    headers: [['content-type', `multipart/form-data; boundary=${boundary}`] as const],
    body: b,
  })),
  // RestoreObject on an archived object, a plain one and hostile keys.
  fc.tuple(fc.oneof(fc.constantFrom('cold', 'dir/object'), segment), body).map(([k, b]) => ({
    method: 'POST',
    target: `/${BUCKET}/${k}?restore`,
    headers: [],
    body: b,
  })),
  fc.tuple(fc.constantFrom('delete', 'cors', 'website'), body).map(([sub, b]) => ({
    method: sub === 'delete' ? 'POST' : 'PUT',
    target: `/${BUCKET}?${sub}`,
    headers: [],
    body: b,
  })),
);

describe('local S3 server under random and hostile requests', () => {
  it(`answers ${RUNS} of them, still lists afterwards, and writes nothing outside its directory`, async () => {
    const before = await sandbox.outside();
    const unanswered: string[] = [];
    await fc.assert(
      fc.asyncProperty(fc.oneof(random, shaped), async (request) => {
        const sent = Object.fromEntries(request.headers.map(([name, value]) => [name, value]));
        // What an HTTP client can put on the request line: the rest percent-encoded.
        const target = request.target.replaceAll('UPLOAD', uploadId).replace(/[^\x21-\x7e]/gu, escapeAll);
        const m = request.method;
        const answer: RawAnswer = await rawRequest(
          sandbox.server.endpoint,
          m,
          target,
          sent,
          m === 'GET' || m === 'HEAD' ? '' : request.body,
          REQUEST_TIMEOUT_MS,
        );
        if (answer.status < 100) unanswered.push(`${m} ${target} ${JSON.stringify(sent)} → ${answer.status}`);
      }),
      { numRuns: RUNS, interruptAfterTimeLimit: 200_000 },
    );
    expect(unanswered).toEqual([]);
    const listing = await rawRequest(sandbox.server.endpoint, 'GET', '/', {}, '');
    expect(listing.status).toBe(200);
    expect(listing.body).toContain(`<Name>${BUCKET}</Name>`);
    expect(await sandbox.outside()).toEqual(before);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  }, 240_000);
});
