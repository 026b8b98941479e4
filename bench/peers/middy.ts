/**
 * middy + @middy/event-normalizer: the normalizer unmarshals every record's Keys/NewImage/OldImage
 * in place before the handler runs. `wrapNumbers: true` is required (otherwise a 38-digit number
 * throws and the whole batch fails). Because the raw images are gone by the time the handler
 * runs, a lossless archive needs the TTL-delete lines taken by a middleware that runs first.
 */

import { gzipSync } from 'node:zlib';
import middy, { type MiddlewareObj } from '@middy/core';
import eventNormalizer from '@middy/event-normalizer';
import type { Context } from 'aws-lambda';
import type { RecordKind } from '../../src/records/types.js';
import { decodeBinariesInPlace } from './decode-binaries.js';
import {
  type BatchResponse,
  type BenchHandler,
  type Collector,
  TTL_PRINCIPAL,
  type Workload,
} from './work.js';

interface NormalizedRecord {
  eventName: string;
  userIdentity?: { type?: string; principalId?: string };
  dynamodb: { Keys: unknown; NewImage?: unknown; OldImage?: unknown; SequenceNumber: string };
}

interface ArchiveContext extends Context {
  archive?: { lines: string };
}

// The published types omit the options the runtime reads (index.js: `wrapNumbers`).
const normalizer = eventNormalizer as unknown as (options: { wrapNumbers: boolean }) => MiddlewareObj;

function isTtlDelete(record: NormalizedRecord): boolean {
  return (
    record.eventName === 'REMOVE' &&
    record.userIdentity?.type === 'Service' &&
    record.userIdentity.principalId === TTL_PRINCIPAL
  );
}

/** Workload `binaries`: each B and BS member to bytes, after the archive middleware, before the normalizer. */
const binaryDecoder: MiddlewareObj<{ Records: NormalizedRecord[] }> = {
  before: (request) => {
    for (const record of request.event.Records) {
      const d = record.dynamodb;
      decodeBinariesInPlace(d.Keys as never);
      decodeBinariesInPlace(d.NewImage as never);
      decodeBinariesInPlace(d.OldImage as never);
    }
  },
};

export function createHandler(collector: Collector, workload?: Workload): BenchHandler {
  const base = middy<{ Records: NormalizedRecord[] }, BatchResponse, Error, ArchiveContext>().use({
    before: (request) => {
      let lines = '';
      for (const record of request.event.Records)
        if (isTtlDelete(record)) lines += `${JSON.stringify(record)}\n`;
      request.context.archive = { lines };
    },
  });
  const handler = (workload === 'binaries' ? base.use(binaryDecoder) : base)
    .use(normalizer({ wrapNumbers: true }))
    .handler(async (event, context) => {
      const failures: { itemIdentifier: string }[] = [];
      for (const record of event.Records) {
        const d = record.dynamodb;
        try {
          let kind: RecordKind;
          if (record.eventName === 'INSERT') kind = 'insert';
          else if (record.eventName === 'MODIFY') kind = 'modify';
          else kind = isTtlDelete(record) ? 'ttl-delete' : 'user-delete';
          // The normalizer turns absent images into {}; undo that so the output matches the others.
          collector.items.push({
            kind,
            sequenceNumber: d.SequenceNumber,
            keys: d.Keys,
            newImage: record.eventName === 'REMOVE' ? undefined : d.NewImage,
            oldImage: record.eventName === 'INSERT' ? undefined : d.OldImage,
          });
        } catch {
          failures.push({ itemIdentifier: d.SequenceNumber });
          break;
        }
      }
      const lines = context.archive?.lines ?? '';
      if (lines !== '') collector.objects.push(gzipSync(lines));
      return { batchItemFailures: failures };
    });
  return (event, context) => handler(event as { Records: NormalizedRecord[] }, context as never);
}
