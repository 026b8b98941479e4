import { describe, expect, it } from 'vitest';
import { EventSourceMappingEmulator } from '../../../../src/local/emulator/emulator.js';
import { UnstreamableRecordError } from '../../../../src/local/emulator/errors.js';
import { StreamEventBuilder } from '../../../../src/local/emulator/events.js';
import { recordPayloadBytes } from '../../../../src/local/emulator/payload-limit.js';
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

  it('a record too deep to serialize is a typed error, not a raw RangeError', () => {
    const record = insert('deep');
    let value: Record<string, unknown> = { S: 'leaf' };
    for (let i = 0; i < 200_000; i++) value = { M: { a: value } };
    (record.dynamodb as unknown as { NewImage: unknown }).NewImage = { deep: value };
    let thrown: unknown;
    try {
      recordPayloadBytes(record);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(UnstreamableRecordError);
    expect((thrown as UnstreamableRecordError).sequenceNumber).toBe(record.dynamodb.SequenceNumber);
    expect((thrown as Error).cause).toBeInstanceOf(RangeError);
  });

  it('an ordinary record weighs its JSON plus the comma before it', () => {
    const record = insert('a');
    expect(recordPayloadBytes(record)).toBe(Buffer.byteLength(JSON.stringify(record)) + 1);
  });
});
