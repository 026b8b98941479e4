import type { ClassifiedRecord } from '../../../src/records/types.js';
import { runSinkTestKit } from '../../../src/sinks/testkit.js';
import type { Sink, SinkFailure, SinkResult } from '../../../src/sinks/types.js';

/** The custom sink from docs/sinks.md, verbatim but for imports. */
class KeyValueSink implements Sink {
  readonly name = 'key-value';
  constructor(readonly store: Map<string, ClassifiedRecord>) {}
  async write(records: readonly ClassifiedRecord[]): Promise<SinkResult> {
    const failed: SinkFailure[] = [];
    for (const record of records) {
      try {
        this.store.set(record.sequenceNumber, record);
      } catch (error) {
        failed.push({ sequenceNumber: record.sequenceNumber, error });
      }
    }
    return { failed };
  }
}

runSinkTestKit({
  name: 'KeyValueSink (docs example)',
  create: () => new KeyValueSink(new Map()),
  read: (sink) => [...sink.store.keys()].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1)),
});
