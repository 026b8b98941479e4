import type { ClassifiedRecord } from '../../../src/records/types.js';
import { MemorySink } from '../../../src/sinks/index.js';
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

// The failure-injection example from docs/sinks.md, verbatim but for imports.
const failOnce = new Set<string>();
runSinkTestKit({
  name: 'MemorySink with injected failures (docs example)',
  create: () => new MemorySink({ failWhen: (r) => failOnce.delete(r.sequenceNumber) }), // fails each once
  read: (sink) => sink.records,
  injectFailures: (_sink, sequenceNumbers) => {
    for (const s of sequenceNumbers) failOnce.add(s);
  },
});
