import { describe, expect, inject, it } from 'vitest';
import { POISON_KINDS, runFaultSoak } from '../../../bench/lib/fault-soak.js';
import { runVoteSoak } from '../../../bench/lib/vote-soak.js';
import { runWindowSoak } from '../../../bench/lib/window-soak.js';

// The project's own fault soak, small: ~600 TTL deletes with hard values and one poison record of
// every kind, through the event source mapping emulator into the archive pipeline, on an S3
// server that fails 30% of writes, lands some PUTs it answers with an error, and has the archive
// prefix down for a while; the function throws and times out before and after processing.
// The second run: issue 24's shape (tenant objects, compaction and erase beside a redelivery).
// Then the windows handler, and the vote aggregator on DynamoDB Local under client faults.
// bench/suites/fault-soak.ts and `npm run soak` run the large ones; BENCHMARKS.md has their figures.

describe('fault soak (small)', () => {
  it('loses nothing, changes nothing, reads back no duplicate, archives no poison and dead-letters all of it', async () => {
    const result = await runFaultSoak({
      seed: 15,
      records: 600,
      shards: 2,
      timeoutSeconds: 1.5,
      // Two attempts per request, so the outage exhausts retries: valid records are dead-lettered too.
      s3MaxAttempts: 2,
      faults: {
        s3Errors: 0.3,
        latePuts: 0.1,
        latePutsAt: [2, 60],
        archiveOutage: { fromPut: 10, puts: 40 },
        throwBefore: 0.03,
        throwAfter: 0.03,
        timeoutBefore: 0,
        timeoutAfter: 0,
        schedule: { 1: 'throwBefore', 3: 'timeoutBefore', 6: 'throwAfter', 9: 'timeoutAfter' },
      },
    });
    // Every kind of fault happened.
    for (const count of Object.values(result.injected)) expect(count).toBeGreaterThan(0);
    expect(result.poison).toBe(POISON_KINDS.length);
    expect({
      lost: result.lost,
      mismatched: result.mismatched,
      duplicatesAsRead: result.duplicatesAsRead,
      poisonArchived: result.poisonArchived,
      poisonDeadLettered: result.poisonDeadLettered,
      deadLetteredPastFailure: result.deadLetteredPastFailure,
      unexplainedStrays: result.unexplainedStrays,
      processErrors: result.processErrors,
      stalls: result.stalls,
      serverErrors: result.serverErrors,
    }).toEqual({
      lost: 0,
      mismatched: 0,
      duplicatesAsRead: 0,
      poisonArchived: 0,
      poisonDeadLettered: POISON_KINDS.length,
      deadLetteredPastFailure: 0,
      unexplainedStrays: [],
      processErrors: [],
      stalls: [],
      serverErrors: [],
    });
  }, 120_000);

  it('tenant objects (8 per batch), then a redelivery from the start while compactArchive and eraseTenant run: nothing escapes, nothing lost, the erased tenant gone', async () => {
    const result = await runFaultSoak({
      seed: 24,
      records: 400,
      shards: 2,
      tenants: 20,
      maxPartitionsPerBatch: 8,
      compactAndEraseDuringRedelivery: true,
      timeoutSeconds: 1.5,
      s3MaxAttempts: 8,
      faults: {
        s3Errors: 0.3,
        deleteErrors: 0.1,
        latePuts: 0.05,
        throwBefore: 0,
        throwAfter: 0,
        timeoutBefore: 0,
        timeoutAfter: 0,
        schedule: { 1: 'throwAfter', 4: 'timeoutAfter', 7: 'throwBefore' },
      },
    });
    expect(result.maintenance?.compactedHours).toBeGreaterThan(0);
    expect(result.maintenance?.erasedRows).toBeGreaterThan(0);
    expect(result.injected.s3Errors).toBeGreaterThan(0);
    expect({
      processErrors: result.processErrors,
      stalls: result.stalls,
      serverErrors: result.serverErrors,
      lost: result.lost,
      mismatched: result.mismatched,
      duplicatesAsRead: result.duplicatesAsRead,
      erasedTenantRowsLeft: result.maintenance?.erasedTenantRowsLeft,
      poisonArchived: result.poisonArchived,
      unexplainedStrays: result.unexplainedStrays,
    }).toEqual({
      processErrors: [],
      stalls: [],
      serverErrors: [],
      lost: 0,
      mismatched: 0,
      duplicatesAsRead: 0,
      erasedTenantRowsLeft: 0,
      poisonArchived: 0,
      unexplainedStrays: [],
    });
  }, 120_000);

  it('createWindowHandler in tumbling windows, the function failing and hanging, onWindowEnd on a failing S3: every record counted once', async () => {
    const result = await runWindowSoak({
      seed: 24,
      records: 120,
      shards: 2,
      timeoutSeconds: 1,
      faults: { s3Errors: 0.3, latePuts: 0.1, throwBefore: 0.06, throwAfter: 0.06, hang: 0.02 },
    });
    expect(result.segments).toBeGreaterThan(2);
    expect(
      result.injected.s3Errors + result.injected.throwBefore + result.injected.throwAfter,
    ).toBeGreaterThan(0);
    expect({
      countOff: result.countOff,
      sumOff: result.sumOff,
      processErrors: result.processErrors,
      stalls: result.stalls,
      serverErrors: result.serverErrors,
    }).toEqual({ countOff: 0, sumOff: 0, processErrors: [], stalls: [], serverErrors: [] });
  }, 60_000);

  it('votes through the sharded counter while the aggregator runs and crashes, DynamoDB failing before and after applying: cast equals counted, every total equals its shards', async () => {
    const result = await runVoteSoak({
      seed: 24,
      votes: 120,
      contestants: 6,
      shards: 3,
      concurrency: 12,
      faults: { before: 0.1, after: 0.1, aggregatorCrash: 0.4 },
      endpoint: inject('dynamoEndpoint'),
    });
    // The faults happened, the bare ADD's ambiguous case among them.
    expect(result.detail.injected.after500).toBeGreaterThan(0);
    expect(result.detail.injected.throttles + result.detail.injected.before500).toBeGreaterThan(0);
    expect(result.detail.bareLandedButFailed).toBeGreaterThan(0);
    expect(result.detail.exactLandedButFailed).toBeGreaterThan(0);
    expect(result.detail.aggregations.crashed).toBeGreaterThan(0);
    expect({
      processErrors: result.processErrors,
      unexpectedErrors: result.unexpectedErrors,
      stalls: result.stalls,
      exactCountOff: result.exactCountOff,
      exactMarkersOff: result.exactMarkersOff,
      bareUnexplained: result.bareUnexplained,
      totalOff: result.totalOff,
    }).toEqual({
      processErrors: [],
      unexpectedErrors: [],
      stalls: [],
      exactCountOff: 0,
      exactMarkersOff: 0,
      bareUnexplained: 0,
      totalOff: 0,
    });
  }, 60_000);
});
