// The sink every throughput-style suite delivers to: it reads each record's keys and the image
// the record kind carries (new for an insert, old for a delete), as a projection that stores them
// would, so lazily converted images are converted and counted.
import { createPipeline } from '../../src/pipeline/engine.js';
import type { ClassifiedRecord, RecordKind } from '../../src/records/types.js';

/** A pipeline routing `kind` to a sink that reads keys and image; `touched` counts what it read. */
export function readingPipeline(kind: RecordKind, onBatch: () => void = () => undefined) {
  let touched = 0;
  const image = kind === 'insert' || kind === 'modify' ? 'newImage' : 'oldImage';
  const sink = {
    name: 'read-all',
    write(records: readonly ClassifiedRecord[]) {
      for (const r of records) {
        if (r.keys !== undefined) touched++;
        if (r[image] !== undefined) touched++;
      }
      onBatch();
      return undefined;
    },
  };
  return {
    pipeline: createPipeline({ routes: [{ when: kind, to: sink }], metrics: false }),
    touched: () => touched,
  };
}
