/**
 * Powertools for AWS Lambda (TypeScript) batch utility as its docs show it for DynamoDB Streams:
 * a module-level `BatchProcessor(EventType.DynamoDBStreams)` and `processPartialResponse`, images
 * unmarshalled with @aws-sdk/util-dynamodb. `wrapNumbers: true` is required: without it
 * util-dynamodb throws on 38-digit numbers and those records fail.
 */

import { gzipSync } from 'node:zlib';
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { Context, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import type { RecordKind } from '../../src/records/types.js';
import { decodeBinariesInPlace } from './decode-binaries.js';
import { type BenchHandler, type Collector, TTL_PRINCIPAL, type Workload } from './work.js';

type Image = Parameters<typeof unmarshall>[0];
const OPTIONS = { wrapNumbers: true } as const;

export function createHandler(collector: Collector, workload?: Workload): BenchHandler {
  const processor = new BatchProcessor(EventType.DynamoDBStreams);
  const decodeBinaries = workload === 'binaries';
  return async (event, context) => {
    const lines: string[] = [];
    const recordHandler = async (record: DynamoDBRecord): Promise<void> => {
      const d = record.dynamodb ?? {};
      let kind: RecordKind;
      if (record.eventName === 'INSERT') kind = 'insert';
      else if (record.eventName === 'MODIFY') kind = 'modify';
      else if (record.userIdentity?.type === 'Service' && record.userIdentity.principalId === TTL_PRINCIPAL) {
        kind = 'ttl-delete';
        lines.push(`${JSON.stringify(record)}\n`);
      } else kind = 'user-delete';
      if (decodeBinaries) {
        decodeBinariesInPlace(d.Keys as never);
        decodeBinariesInPlace(d.NewImage as never);
        decodeBinariesInPlace(d.OldImage as never);
      }
      collector.items.push({
        kind,
        sequenceNumber: d.SequenceNumber as string,
        keys: d.Keys === undefined ? undefined : unmarshall(d.Keys as Image, OPTIONS),
        newImage: d.NewImage === undefined ? undefined : unmarshall(d.NewImage as Image, OPTIONS),
        oldImage: d.OldImage === undefined ? undefined : unmarshall(d.OldImage as Image, OPTIONS),
      });
    };
    const response = await processPartialResponse(event as DynamoDBStreamEvent, recordHandler, processor, {
      context: context as Context,
    });
    if (lines.length > 0) collector.objects.push(gzipSync(lines.join('')));
    return response;
  };
}
