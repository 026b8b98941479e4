import { describe, expect, it } from 'vitest';
import { EventSourceMappingEmulator } from '../../../../src/local/emulator/emulator.js';
import { UnstreamableRecordError } from '../../../../src/local/emulator/errors.js';
import { StreamEventBuilder } from '../../../../src/local/emulator/events.js';
import {
  INVOCATION_PAYLOAD_LIMIT_BYTES,
  recordPayloadBytes,
} from '../../../../src/local/emulator/payload-limit.js';
import type { LambdaStreamRecord } from '../../../../src/records/types.js';

function insert(pk: string): LambdaStreamRecord {
  return new StreamEventBuilder({ now: 1_767_225_600 }).insert({ pk });
}

function run(records: LambdaStreamRecord[], handled: string[]) {
  const emulator = new EventSourceMappingEmulator({
    batchSize: 10,
    handler: async (event) => {
      for (const r of event.Records) handled.push(r.dynamodb.SequenceNumber);
    },
  });
  return emulator.runShard({ shardId: 's-1', streamArn: records[0]?.eventSourceARN ?? '', pages: [records] });
}

describe('EventSourceMappingEmulator: records no DynamoDB stream can carry', () => {
  it('a SequenceNumber that is not digits is refused by name, before any invocation', async () => {
    const poison = insert('p');
    poison.dynamodb.SequenceNumber = '12abc';
    const handled: string[] = [];
    const error = await run([insert('a'), poison], handled).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnstreamableRecordError);
    expect((error as UnstreamableRecordError).name).toBe('UnstreamableRecordError');
    expect((error as UnstreamableRecordError).sequenceNumber).toBe('12abc');
    expect((error as UnstreamableRecordError).eventID).toBe(poison.eventID);
    expect((error as Error).message).toMatch(/not a DynamoDB sequence number/);
    expect(handled).toEqual([]);
  });

  it('a record too deep to serialize stops the run with a typed error, not a raw RangeError', async () => {
    const record = insert('deep');
    let value: Record<string, unknown> = { S: 'leaf' };
    for (let i = 0; i < 200_000; i++) value = { M: { a: value } };
    (record.dynamodb as unknown as { NewImage: unknown }).NewImage = { deep: value };
    const handled: string[] = [];
    const error = await run([insert('a'), record], handled).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnstreamableRecordError);
    expect((error as UnstreamableRecordError).sequenceNumber).toBe(record.dynamodb.SequenceNumber);
    expect((error as Error).cause).toBeInstanceOf(RangeError);
  });
});

describe('EventSourceMappingEmulator: the 6 MB payload cut, at the byte', () => {
  /** Two records whose event JSON is exactly `total` bytes. */
  function pairOfSize(total: number): LambdaStreamRecord[] {
    const a = insert('a');
    const b = insert('b');
    (b.dynamodb as unknown as { NewImage: unknown }).NewImage = { pk: { S: 'b' }, blob: { S: '' } };
    const base = Buffer.byteLength(JSON.stringify({ Records: [a, b] }));
    (b.dynamodb as unknown as { NewImage: { blob: { S: string } } }).NewImage.blob.S = 'x'.repeat(
      total - base,
    );
    expect(Buffer.byteLength(JSON.stringify({ Records: [a, b] }))).toBe(total);
    return [a, b];
  }

  async function invocationSizes(records: LambdaStreamRecord[]): Promise<number[]> {
    const sizes: number[] = [];
    await new EventSourceMappingEmulator({
      batchSize: 100,
      handler: async (event) => {
        sizes.push(event.Records.length);
      },
    }).runRecords(records);
    return sizes;
  }

  it('an event of exactly 6 MiB goes out whole; one byte more is cut before the record that passes it', async () => {
    expect(await invocationSizes(pairOfSize(INVOCATION_PAYLOAD_LIMIT_BYTES))).toEqual([2]);
    expect(await invocationSizes(pairOfSize(INVOCATION_PAYLOAD_LIMIT_BYTES + 1))).toEqual([1, 1]);
  });

  it('a record over the limit on its own goes alone, and the records around it are still delivered', async () => {
    const big = insert('big');
    (big.dynamodb as unknown as { NewImage: unknown }).NewImage = {
      pk: { S: 'big' },
      blob: { S: 'x'.repeat(INVOCATION_PAYLOAD_LIMIT_BYTES) },
    };
    expect(recordPayloadBytes(big)).toBeGreaterThan(INVOCATION_PAYLOAD_LIMIT_BYTES);
    expect(await invocationSizes([insert('a'), big, insert('c')])).toEqual([1, 1, 1]);
  });
});
