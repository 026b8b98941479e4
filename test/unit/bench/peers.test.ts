import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { binaryHeavyRecords } from '../../../bench/lib/binary-records.js';
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
      .filter((peer) => peer.only === undefined || peer.only.includes(workload))
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

/** Every binary of an item (at any depth, set members included), in document order. */
function binariesOf(value: unknown, out: Uint8Array[] = []): Uint8Array[] {
  if (value instanceof Uint8Array) out.push(value);
  else if (value instanceof Set || Array.isArray(value)) for (const v of value) binariesOf(v, out);
  else if (value !== null && typeof value === 'object')
    for (const v of Object.values(value)) binariesOf(v, out);
  return out;
}

describe('bench peers on binary-heavy images (workload binaries)', () => {
  const records = binaryHeavyRecords(7, 60);
  const json = JSON.stringify({ Records: records });

  async function images(id: string): Promise<unknown[]> {
    const peer = [...PEERS, ...VARIANTS].find((p) => p.id === id);
    if (peer === undefined) throw new Error(id);
    const collector = newCollector();
    await peer.create(collector, 'binaries')(JSON.parse(json), benchContext());
    return collector.items.flatMap((i) => [i.newImage, i.oldImage]);
  }

  it('every implementation decodes every binary to the same bytes', async () => {
    const reference = (await images('hand-loop')).map((image) =>
      binariesOf(image).map((b) => Buffer.from(b)),
    );
    expect(reference.flat().length).toBeGreaterThan(records.length);
    for (const id of ['tidewater', 'tidewater-direct', 'powertools', 'middy', 'hand-loop-isolated']) {
      const decoded = (await images(id)).map((image) => binariesOf(image).map((b) => Buffer.from(b)));
      expect(decoded, id).toEqual(reference);
    }
  });

  it("the isolated loop's binaries share memory only with their own image's binaries", async () => {
    for (const image of await images('hand-loop-isolated')) {
      const binaries = binariesOf(image);
      const buffers = new Set(binaries.map((b) => b.buffer));
      expect(buffers.size).toBeLessThanOrEqual(1);
      const total = binaries.reduce((n, b) => n + b.byteLength, 0);
      for (const b of binaries) expect(b.buffer.byteLength).toBe(total);
    }
  });
});
