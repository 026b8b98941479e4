import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { generateEvent } from '../../../bench/lib/events.js';
import { benchContext } from '../../../bench/lib/lambda-context.js';
import { newCollector, PEERS, VARIANTS, WORKLOADS } from '../../../bench/peers/index.js';

/** Every archived line names its record's sequence number, whatever the row shape. */
function archivedSequences(objects: readonly Uint8Array[]): string[] {
  return objects.flatMap((o) =>
    gunzipSync(o)
      .toString('utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => {
        const row = JSON.parse(line) as { sequenceNumber?: string; dynamodb?: { SequenceNumber?: string } };
        return (row.sequenceNumber ?? row.dynamodb?.SequenceNumber) as string;
      }),
  );
}

describe('bench peers do the same work', () => {
  const json = JSON.stringify(generateEvent({ seed: 99, count: 300 }));
  const expected = generateEvent({ seed: 99, count: 300 }).Records;
  const ttlSequences = expected
    .filter((r) => r.userIdentity !== undefined)
    .map((r) => r.dynamodb.SequenceNumber);

  const cases = WORKLOADS.flatMap((workload) =>
    [...PEERS, ...VARIANTS]
      .filter((peer) => peer.only === undefined || peer.only === workload)
      .map((peer) => ({ peer, workload })),
  );
  for (const { peer, workload } of cases) {
    it(`${peer.name} (${workload}): every record classified and pushed, TTL deletes archived, no failures`, async () => {
      const collector = newCollector();
      const response = await peer.create(collector, workload)(JSON.parse(json), benchContext());
      expect(response?.batchItemFailures).toEqual([]);
      expect(collector.items.map((i) => i.sequenceNumber)).toEqual(
        expected.map((r) => r.dynamodb.SequenceNumber),
      );
      expect(collector.items.map((i) => i.kind)).toEqual(
        expected.map((r) =>
          r.eventName === 'INSERT'
            ? 'insert'
            : r.eventName === 'MODIFY'
              ? 'modify'
              : r.userIdentity
                ? 'ttl-delete'
                : 'user-delete',
        ),
      );
      for (const [i, item] of collector.items.entries()) {
        const d = expected[i]?.dynamodb;
        expect(item.newImage === undefined).toBe(d?.NewImage === undefined);
        expect(item.oldImage === undefined).toBe(d?.OldImage === undefined);
        expect(Object.keys(item.keys as object).sort()).toEqual(['pk', 'sk']);
      }
      expect(ttlSequences.length).toBeGreaterThan(0);
      expect(archivedSequences(collector.objects)).toEqual(ttlSequences);
    });
  }
});
