/**
 * tidewater doing the shared work (see work.ts) with its own parts: the record parser (lossless,
 * lazy images), two Sinks — one that materializes each record's images into the in-memory array,
 * one that runs the S3 archive sink's object encoder (row shaping, NDJSON, gzip, SHA-256 — all but
 * the PUT) — and the batch engine (src/pipeline) routing records to them.
 */

import { type ArchiveLayout, planArchiveObjects } from '../../src/archive/objects.js';
import { createJsonLogger } from '../../src/logging/json-logger.js';
import { createStreamHandler } from '../../src/pipeline/index.js';
import { createRecordParser } from '../../src/records/parse.js';
import type { ClassifiedRecord } from '../../src/records/types.js';
import { recordImageError } from '../../src/records/validate.js';
import type { Sink, SinkResult } from '../../src/sinks/types.js';
import { type BenchHandler, type Collector, TTL_ATTRIBUTE, type Workload } from './work.js';

/**
 * Every routed record pushed to the collector. `archive`: the classified record itself (its
 * images unmarshal if and when a consumer reads them); `materialize`: images read now.
 */
export function arraySink(collector: Collector, workload: Workload): Sink {
  if (workload === 'archive') {
    return {
      name: 'bench-array',
      write(records: readonly ClassifiedRecord[]): SinkResult | undefined {
        for (const r of records) collector.items.push(r);
        return undefined;
      },
    };
  }
  return {
    name: 'bench-array',
    write(records: readonly ClassifiedRecord[]): SinkResult | undefined {
      for (const r of records) {
        collector.items.push({
          kind: r.kind,
          sequenceNumber: r.sequenceNumber,
          keys: r.keys,
          newImage: r.newImage,
          oldImage: r.oldImage,
        });
      }
      return undefined;
    },
  };
}

const LAYOUT: ArchiveLayout = {
  prefix: 'archive',
  ttlAttribute: TTL_ATTRIBUTE,
  maxObjectBytes: 16 * 1024 * 1024,
  table: undefined,
};

/**
 * The S3 archive sink's encoder, keeping the encoded objects in memory instead of PUTting them.
 * Like S3ArchiveSink it takes only checked images: the pipeline checks each record's keys and
 * images (DynamoDB's rules and limits) before handing it over.
 */
export function archiveEncoderSink(collector: Collector): Sink {
  return {
    name: 'bench-archive-encoder',
    checkedImages: true,
    write(records: readonly ClassifiedRecord[]): SinkResult | undefined {
      const { objects, failed } = planArchiveObjects(records, LAYOUT);
      for (const o of objects) collector.objects.push(o.body);
      return failed.length === 0 ? undefined : { failed };
    },
  };
}

/**
 * Records core + sinks wired by hand (no batch engine): the lower bound of tidewater's overhead,
 * and the stand-in while the pipeline is not there.
 */
export function createDirectHandler(collector: Collector, workload: Workload = 'archive'): BenchHandler {
  // The pipeline's default parse: the envelope checked, keys and images left lazy.
  const parse = createRecordParser();
  const all = arraySink(collector, workload);
  const archive = archiveEncoderSink(collector);
  return async (event) => {
    const raw = (event as { Records: unknown[] }).Records;
    const records: ClassifiedRecord[] = new Array(raw.length);
    const ttl: ClassifiedRecord[] = [];
    for (let i = 0; i < raw.length; i++) {
      const r = parse(raw[i]);
      records[i] = r;
      // The check the pipeline makes for a sink that stores images (checkedImages).
      if (r.kind === 'ttl-delete' && recordImageError(r) === undefined) ttl.push(r);
    }
    await all.write(records, {});
    if (ttl.length > 0) await archive.write(ttl, {});
    return { batchItemFailures: [] };
  };
}

/** Discards output: logs and metrics are produced (their cost is real) but not printed. */
const DISCARD = { write: (): void => undefined };

/**
 * What a user writes: `createStreamHandler` with two routes, default options (ordered mode,
 * lazy parse, retries, deadline), logs and EMF metrics produced and discarded.
 */
export function createHandler(collector: Collector, workload: Workload = 'archive'): BenchHandler {
  const handler = createStreamHandler({
    routes: [
      {
        name: 'all',
        when: ['insert', 'modify', 'user-delete', 'ttl-delete'],
        to: arraySink(collector, workload),
      },
      { name: 'archive', when: 'ttl-delete', to: archiveEncoderSink(collector) },
    ],
    logger: createJsonLogger({ destination: DISCARD }),
    metrics: { writer: DISCARD },
  });
  return (event, context) => handler(event as never, context as never);
}
