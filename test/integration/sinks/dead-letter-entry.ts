import type { DeadLetterEntry } from '../../../src/sinks/types.js';

/** Dead-letter entry number `i`, as the pipeline would send it (identity, record, error). */
export function entry(i: number, extra: Partial<DeadLetterEntry> = {}): DeadLetterEntry {
  return {
    reason: 'retries-exhausted',
    record: {
      eventID: `ev-${i}`,
      dynamodb: {
        SequenceNumber: String(1000 + i),
        Keys: { pk: { S: `k${i}` } },
        bin: new Uint8Array([1, 2, i & 0xff]),
      },
    },
    eventID: `ev-${i}`,
    sequenceNumber: String(1000 + i),
    eventSourceARN: 'arn:aws:dynamodb:us-east-1:123456789012:table/t/stream/2026-01-01T00:00:00.000',
    error: { name: 'ArchiveWriteError', message: 'boom' },
    attempts: 3,
    sinkName: 's3-archive',
    at: '2026-01-15T10:00:00.000Z',
    ...extra,
  };
}
