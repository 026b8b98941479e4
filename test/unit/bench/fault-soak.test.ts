import { describe, expect, it } from 'vitest';
import { buildShards, POISON_KINDS } from '../../../bench/lib/fault-soak.js';
import { createRandom } from '../../../bench/lib/random.js';
import { MalformedRecordError, parseStreamRecord } from '../../../src/records/index.js';
import { recordImageError } from '../../../src/records/validate.js';

// The soak's input, checked on its own: its valid records are ones DynamoDB can send (so every
// one must be archived), and each poison record breaks a rule (so none may be).

function verdict(record: unknown): 'valid' | 'malformed' | 'undated' {
  let parsed: ReturnType<typeof parseStreamRecord>;
  try {
    parsed = parseStreamRecord(record);
  } catch (error) {
    expect(error).toBeInstanceOf(MalformedRecordError);
    return 'malformed';
  }
  if (recordImageError(parsed) !== undefined) return 'malformed';
  return parsed.approximateCreationTime === undefined ? 'undated' : 'valid';
}

describe('the fault soak input', () => {
  it.each([1, 2, 3])(
    '%i shard(s): every valid record passes, one poison record of each kind fails',
    (shards) => {
      const { shards: built, poison } = buildShards(createRandom(42), 400, shards);
      expect(built).toHaveLength(shards);
      const all = built.flatMap((s) => s.records);
      expect(all).toHaveLength(400 + POISON_KINDS.length);
      expect(poison.size).toBe(POISON_KINDS.length);
      const verdicts = { valid: 0, malformed: 0, undated: 0 };
      for (const record of all) {
        const v = verdict(record);
        verdicts[v]++;
        expect(v === 'valid').toBe(!poison.has(`${record.dynamodb.SequenceNumber}/${record.eventID}`));
      }
      // The record without a creation time parses; the archive refuses it.
      expect(verdicts).toEqual({ valid: 400, malformed: POISON_KINDS.length - 1, undated: 1 });
      // Shards share sequence numbers; eventIDs keep records apart.
      expect(new Set(all.map((r) => r.eventID)).size).toBe(all.length);
    },
  );

  it('is the same for the same seed', () => {
    expect(JSON.stringify(buildShards(createRandom(7), 50, 2).shards)).toBe(
      JSON.stringify(buildShards(createRandom(7), 50, 2).shards),
    );
  });
});
