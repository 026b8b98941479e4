// A custom sink, written against tidewater's Sink contract: one JSON object per user delete, so
// an auditor can see who deleted which order and what it held. Idempotent by construction: the
// key is a function of the record, so a redelivered record overwrites itself with the same bytes.
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { Sink, SinkFailure, UserDeleteRecord } from 'tidewater';

export interface AuditSinkOptions {
  bucket: string;
  /** Key prefix, ending in `/`. */
  prefix: string;
  client?: S3Client;
}

/** Zero-padded so that a listing returns one shard's records in stream order. */
export function auditKey(
  prefix: string,
  record: Pick<UserDeleteRecord, 'sequenceNumber' | 'eventID'>,
): string {
  return `${prefix}${record.sequenceNumber.padStart(40, '0')}-${record.eventID}.json`;
}

export function auditSink(options: AuditSinkOptions): Sink<UserDeleteRecord> {
  let client = options.client;
  return {
    name: 'audit',
    async write(records, { signal }) {
      client ??= new S3Client({});
      const s3 = client;
      const failed: SinkFailure[] = [];
      await Promise.all(
        records.map(async (record) => {
          const body = JSON.stringify({
            eventID: record.eventID,
            sequenceNumber: record.sequenceNumber,
            table: record.tableName,
            deletedAt: record.approximateCreationTime,
            // DynamoDB JSON as the stream carried it: lossless (38-digit numbers, binary, sets).
            keys: record.raw.dynamodb.Keys,
            oldImage: record.raw.dynamodb.OldImage,
          });
          try {
            await s3.send(
              new PutObjectCommand({
                Bucket: options.bucket,
                Key: auditKey(options.prefix, record),
                Body: body,
                ContentType: 'application/json',
              }),
              { abortSignal: signal },
            );
          } catch (error) {
            failed.push({ sequenceNumber: record.sequenceNumber, error });
          }
        }),
      );
      return { failed };
    },
  };
}
