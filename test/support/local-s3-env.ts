import { inject, vi } from 'vitest';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../src/local/servers/dynamodb-local.js';

/**
 * Points a command's own S3 client at the run's local S3 server through the environment, as it
 * would find AWS (undone by `vi.unstubAllEnvs()`).
 */
export function stubLocalS3Env(): void {
  vi.stubEnv('AWS_ENDPOINT_URL_S3', inject('s3Endpoint'));
  vi.stubEnv('AWS_REGION', LOCAL_REGION);
  vi.stubEnv('AWS_ACCESS_KEY_ID', LOCAL_CREDENTIALS.accessKeyId);
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', LOCAL_CREDENTIALS.secretAccessKey);
  vi.stubEnv('AWS_REQUEST_CHECKSUM_CALCULATION', 'WHEN_REQUIRED');
  vi.stubEnv('AWS_RESPONSE_CHECKSUM_VALIDATION', 'WHEN_REQUIRED');
}
