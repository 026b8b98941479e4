import type { AttributeMap, ClassifiedRecord } from '../../src/records/types.js';
import { itemKeyOf } from '../../src/sinks/record-version.js';
import type { Sink, SinkResult } from '../../src/sinks/types.js';

/**
 * A sink that stores item state, like a copy table or a search index: per key the last written
 * image in DynamoDB JSON (lossless), a delete removes it. `failNext` makes chosen records fail
 * on their next write, as a flaky index would.
 */
export class ItemStateSink implements Sink {
  readonly name = 'item-state';
  readonly items = new Map<string, AttributeMap>();
  readonly failNext = new Set<string>();
  /** Every record written, in order (what the guard let through). */
  readonly written: ClassifiedRecord[] = [];

  write(records: readonly ClassifiedRecord[]): SinkResult {
    const failed: { sequenceNumber: string; error: unknown }[] = [];
    for (const record of records) {
      if (this.failNext.delete(record.sequenceNumber)) {
        failed.push({ sequenceNumber: record.sequenceNumber, error: new Error('injected index failure') });
        continue;
      }
      const key = itemKeyOf(record);
      const image = record.raw.dynamodb.NewImage;
      if (record.kind === 'user-delete' || record.kind === 'ttl-delete') this.items.delete(key);
      else if (image !== undefined) this.items.set(key, image);
      this.written.push(record);
    }
    return failed.length === 0 ? {} : { failed };
  }
}
