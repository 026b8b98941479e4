import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BATCH_GET_LIMIT, planBatches } from '../../../src/votes/batch-plan.js';

describe('batch plan', () => {
  it('covers every slot once, in calls of at most 100 keys, with ceil(C·(S+1)/100) calls', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 600 }),
        fc.integer({ min: 1, max: 60 }),
        (contestants, shards) => {
          const plan = planBatches(contestants, shards);
          expect(plan.batches).toBe(Math.ceil((contestants * (shards + 1)) / 100));
          let next = 0;
          for (let b = 0; b < plan.batches; b++) {
            const [start, end] = plan.range(b);
            expect(start).toBe(next);
            expect(end - start).toBeGreaterThan(0);
            expect(end - start).toBeLessThanOrEqual(BATCH_GET_LIMIT);
            next = end;
          }
          expect(next).toBe(contestants * (shards + 1));
        },
      ),
    );
  });
});
