import { describe, expect, it } from 'vitest';
import { runDemo } from '../../../src/cli/demo-app.js';

// What `tidewater demo` (npm start) runs, end to end on its own servers: DynamoDB Local's real TTL deletes,
// archived by the serverless.yml handler through the emulator, plus the vote aggregator.
describe('the demo app (tidewater demo, npm start)', () => {
  it('archives every TTL delete, routes user deletes, flags broken TTLs and totals the votes', async () => {
    // DynamoDB Local's TTL sweep reads 20 items a page and pauses 10 s between pages, so the last
    // TTL delete can come 30 s and more after the writes; with the cores busy the whole job takes
    // ~75 s. The wait for the archive (default 90 s) and the test's timeout are hang detectors,
    // set well clear of that: the job returns as soon as every delete is archived.
    const summary = await runDemo({
      expiredItems: 5,
      liveItems: 2,
      userDeletes: 3,
      votes: 120,
      timeoutMs: 300_000,
    });
    expect(summary.problems).toEqual([]);
    expect(summary.ok).toBe(true);

    expect(summary.archive.ttlDeletesArchived).toBe(5);
    expect(summary.archive.userDeletesArchived).toBe(3);
    const ttlObjects = summary.archive.objects.filter((o) => !o.key.includes('user-deletes/'));
    const userObjects = summary.archive.objects.filter((o) => o.key.includes('user-deletes/'));
    // Routing: TTL deletes and user deletes never share an object.
    expect(ttlObjects.every((o) => Object.keys(o.kinds).join() === 'ttl-delete')).toBe(true);
    expect(userObjects.every((o) => Object.keys(o.kinds).join() === 'user-delete')).toBe(true);
    for (const object of summary.archive.objects) {
      expect(object.key).toMatch(
        /^archive\/(user-deletes\/)?table=tidewater-local-records\/dt=\d{4}-\d{2}-\d{2}\/hour=\d{2}\/[^/]+\/\d+-\d+(-[0-9a-f]{12})?\.ndjson\.gz$/,
      );
      expect(object.storageClass).toBe('STANDARD');
    }

    // The deployed filter drops inserts, modifies and vote writes before the function runs.
    expect(summary.lambda.filteredOut).toBeGreaterThan(0);
    expect(summary.lambda.functionErrors).toBe(0);
    expect(summary.lambda.onFailureRecords).toBe(0);
    expect(summary.lambda.deadLettered).toBe(0);

    expect(summary.neverExpiring.map((i) => [i.pk, i.reason])).toEqual([
      ['SESSION#millis-ttl', 'milliseconds'],
      ['SESSION#string-ttl', 'not-a-number'],
    ]);

    expect(summary.votes.duplicatesRejected).toBe(12);
    expect(summary.votes.totals).toEqual([
      { contestant: 'aurora', total: '30', expected: '30' },
      { contestant: 'borealis', total: '30', expected: '30' },
      { contestant: 'cirrus', total: '30', expected: '30' },
      { contestant: 'delta', total: '30', expected: '30' },
    ]);
  }, 600_000);
});
