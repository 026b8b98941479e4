import { S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from './dynamodb-local.js';

/**
 * An S3 client for the local S3 server: path-style URLs (s3rver serves no virtual hosts) and
 * checksums only where S3 requires them (s3rver predates flexible checksums). `config` adds to
 * that (retries, a retry strategy).
 */
export function localS3Client(endpoint: string, config: S3ClientConfig = {}): S3Client {
  return new S3Client({
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    endpoint,
    forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    ...config,
  });
}
