import type { PutObjectCommandInput } from '@aws-sdk/client-s3';
import { defineOptions } from '../core/options.js';

// How objects in the archive bucket are keyed and encrypted: the archive sink, the S3 dead-letter
// sink and archive maintenance write there under the same rules.

/** A key prefix; keyPrefix() drops its leading and trailing slashes. */
export const PREFIX_OPTION = { kind: 'string' } as const;

/** Key prefix without leading/trailing slashes; '' for none. */
export function keyPrefix(prefix: string | undefined): string {
  return prefix === undefined ? '' : prefix.replace(/^\/+|\/+$/g, '');
}

/** Server-side encryption of written objects: SSE-S3 (`'AES256'`) or a KMS key. */
export type ServerSideEncryption = 'AES256' | { kmsKeyId: string; bucketKeyEnabled?: boolean };

/** The `sse` option; a `{ kmsKeyId }` object's members are read by sseParams. */
export const SSE_OPTION = {
  kind: 'custom',
  expected: "'AES256' or { kmsKeyId, bucketKeyEnabled? }",
  check: (v: unknown) => v === 'AES256' || (v !== null && typeof v === 'object' && !Array.isArray(v)),
} as const;

const readKms = /* @__PURE__ */ defineOptions<Exclude<ServerSideEncryption, 'AES256'>>()('sse', {
  kmsKeyId: { kind: 'nonEmptyString', required: true },
  bucketKeyEnabled: { kind: 'boolean' },
});

/** PutObject encryption parameters of an `sse` option SSE_OPTION accepted, shared by every S3 sink. */
export function sseParams(
  sse: ServerSideEncryption | undefined,
  where: string,
): Partial<PutObjectCommandInput> {
  if (sse === undefined) return {};
  if (sse === 'AES256') return { ServerSideEncryption: 'AES256' };
  const { kmsKeyId, bucketKeyEnabled } = readKms(sse, where, 'sse.');
  return {
    ServerSideEncryption: 'aws:kms',
    SSEKMSKeyId: kmsKeyId,
    ...(bucketKeyEnabled === undefined ? {} : { BucketKeyEnabled: bucketKeyEnabled }),
  };
}
