import type { PutObjectCommandInput } from '@aws-sdk/client-s3';
import { InvalidOptionsError } from '../records/errors.js';
import { assertOptions } from '../records/options.js';

export { assertOptions };

export function optionalString(options: object | undefined, key: string, where: string): string | undefined {
  const value = (options as Record<string, unknown> | undefined)?.[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') {
    throw new InvalidOptionsError(`${where}: option '${key}' must be a non-empty string`);
  }
  return value;
}

export function requiredString(options: object | undefined, key: string, where: string): string {
  const value = optionalString(options, key, where);
  if (value === undefined) throw new InvalidOptionsError(`${where}: option '${key}' is required`);
  return value;
}

export function positiveInteger(
  options: object | undefined,
  key: string,
  where: string,
  fallback: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const value = (options as Record<string, unknown> | undefined)?.[key];
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw new InvalidOptionsError(`${where}: option '${key}' must be an integer from 1 to ${max}`);
  }
  return value;
}

export function optionalFunction<F>(options: object | undefined, key: string, where: string): F | undefined {
  const value = (options as Record<string, unknown> | undefined)?.[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'function')
    throw new InvalidOptionsError(`${where}: option '${key}' must be a function`);
  return value as F;
}

/** Key prefix without leading/trailing slashes; '' for none. */
export function keyPrefix(options: object | undefined, where: string): string {
  const value = (options as { prefix?: unknown } | undefined)?.prefix;
  if (value === undefined) return '';
  if (typeof value !== 'string') throw new InvalidOptionsError(`${where}: option 'prefix' must be a string`);
  return value.replace(/^\/+|\/+$/g, '');
}

/** A client must look like an AWS SDK v3 client: it has `send`. */
export function optionalClient<C>(options: object | undefined, where: string): C | undefined {
  const value = (options as { client?: unknown } | undefined)?.client;
  if (value === undefined) return undefined;
  if (value === null || typeof (value as { send?: unknown }).send !== 'function') {
    throw new InvalidOptionsError(`${where}: option 'client' must be an AWS SDK v3 client (with send())`);
  }
  return value as C;
}

export type ServerSideEncryption = 'AES256' | { kmsKeyId: string; bucketKeyEnabled?: boolean };

/** PutObject encryption parameters of an `sse` option, shared by every S3 sink so they validate alike. */
export function sseParams(sse: unknown, where: string): Partial<PutObjectCommandInput> {
  if (sse === undefined) return {};
  if (sse === 'AES256') return { ServerSideEncryption: 'AES256' };
  if (sse !== null && typeof sse === 'object' && !Array.isArray(sse)) {
    assertOptions(sse, ['kmsKeyId', 'bucketKeyEnabled'], `${where} sse`);
    const { kmsKeyId, bucketKeyEnabled } = sse as { kmsKeyId?: unknown; bucketKeyEnabled?: unknown };
    if (typeof kmsKeyId !== 'string' || kmsKeyId === '') {
      throw new InvalidOptionsError(`${where}: sse.kmsKeyId must be a KMS key id, alias or ARN`);
    }
    if (bucketKeyEnabled !== undefined && typeof bucketKeyEnabled !== 'boolean') {
      throw new InvalidOptionsError(`${where}: sse.bucketKeyEnabled must be a boolean`);
    }
    return {
      ServerSideEncryption: 'aws:kms',
      SSEKMSKeyId: kmsKeyId,
      ...(bucketKeyEnabled === undefined ? {} : { BucketKeyEnabled: bucketKeyEnabled }),
    };
  }
  throw new InvalidOptionsError(`${where}: sse must be 'AES256' or { kmsKeyId }`);
}
