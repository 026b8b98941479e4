// The archive bucket, as infra/bucket.yml deploys it: private (public access blocked, ACLs off),
// encrypted (SSE-S3, or SSE-KMS with a bucket key), TLS-only, versioned, retained when the stack
// goes, and moving archives into Glacier while dead letters expire.

import type * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Duration, RemovalPolicy } from 'aws-cdk-lib/core';
import type { Construct } from 'constructs';

export interface ArchiveBucketSettings {
  readonly bucketName: string | undefined;
  readonly encryptionKey: kms.IKey | undefined;
  readonly versioned: boolean;
  readonly archivePrefix: string;
  readonly deadLetterPrefix: string;
  readonly glacierAfterDays: number;
  readonly deepArchiveAfterDays: number;
  readonly noncurrentExpireAfterDays: number;
  readonly deadLetterExpireAfterDays: number;
}

export function archiveBucket(scope: Construct, id: string, s: ArchiveBucketSettings): s3.Bucket {
  const days = Duration.days;
  return new s3.Bucket(scope, id, {
    bucketName: s.bucketName,
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    enforceSSL: true,
    encryption: s.encryptionKey === undefined ? s3.BucketEncryption.S3_MANAGED : s3.BucketEncryption.KMS,
    encryptionKey: s.encryptionKey,
    bucketKeyEnabled: s.encryptionKey === undefined ? undefined : true,
    versioned: s.versioned,
    // Archives outlive the stack.
    removalPolicy: RemovalPolicy.RETAIN,
    // S3's default, stated: objects under 128 KB never transition (their per-object overhead in
    // GLACIER would outweigh the saving); compaction makes an hour's objects large enough to move.
    transitionDefaultMinimumObjectSize: s3.TransitionDefaultMinimumObjectSize.ALL_STORAGE_CLASSES_128_K,
    lifecycleRules: [
      {
        id: 'archive-to-glacier',
        prefix: s.archivePrefix,
        transitions: [
          { storageClass: s3.StorageClass.GLACIER, transitionAfter: days(s.glacierAfterDays) },
          { storageClass: s3.StorageClass.DEEP_ARCHIVE, transitionAfter: days(s.deepArchiveAfterDays) },
        ],
        ...(s.versioned
          ? {
              // Versioning keeps overwritten archives: move those along too, and expire them late.
              noncurrentVersionTransitions: [
                { storageClass: s3.StorageClass.GLACIER, transitionAfter: days(s.glacierAfterDays) },
              ],
              noncurrentVersionExpiration: days(s.noncurrentExpireAfterDays),
            }
          : {}),
      },
      {
        // Dead-letter entries hold whole item images: deleted once a redrive had its time.
        id: 'dead-letter-expiry',
        prefix: s.deadLetterPrefix,
        expiration: days(s.deadLetterExpireAfterDays),
        ...(s.versioned ? { noncurrentVersionExpiration: days(1) } : {}),
      },
      { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: days(7) },
    ],
  });
}
