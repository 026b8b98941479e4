import type { LambdaKinesisRecord } from '../../records/index.js';
import { type Clock, ManualClock } from './clock.js';
import type { ShardResult } from './emulator.js';
import { ReplayFileError } from './errors.js';
import { KinesisMappingEmulator, type KinesisMappingOptions } from './kinesis-emulator.js';
import { failureLog } from './replay.js';
import { readJsonLines } from './replay-lines.js';

/** Options of replayKinesis: the JSONL files and the mapping to replay through. */
export interface KinesisReplayOptions {
  /** JSONL files: each line a Lambda Kinesis event (`{Records: [...]}`) or one Lambda Kinesis record. */
  files: string | string[];
  /** The Kinesis mapping to replay through (its clock defaults to the replay clock). */
  mapping: Omit<KinesisMappingOptions, 'clock'>;
  /** Defaults to a ManualClock at the newest record's approximateArrivalTimestamp. */
  clock?: Clock;
  /** Failed invocations, one line each, repeats collapsed (as `replay`'s `log`). */
  log?: (line: string) => void;
}

/** What replayKinesis did: the emulator, per-shard results and record count. */
export interface KinesisReplayResult {
  emulator: KinesisMappingEmulator;
  shards: ShardResult[];
  records: number;
}

/**
 * `replay` for a Kinesis-fed function: the files' records through the Kinesis mapping, shards
 * (the `<shardId>` of each record's eventID `<shardId>:<sequenceNumber>`) in the order they first
 * appear, each run to completion before the next; a Lambda event's batch stays one page.
 */
export async function replayKinesis(options: KinesisReplayOptions): Promise<KinesisReplayResult> {
  const files = typeof options.files === 'string' ? [options.files] : options.files;
  const shards = new Map<string, { streamArn: string; pages: LambdaKinesisRecord[][] }>();
  let newest = 0;
  let total = 0;
  for (const file of files) {
    for await (const { records, event } of readKinesisReplayFile(file)) {
      for (const record of records) {
        const shardId = record.eventID.slice(0, record.eventID.lastIndexOf(':'));
        let shard = shards.get(shardId);
        if (!shard) {
          shard = { streamArn: record.eventSourceARN ?? '', pages: [[]] };
          shards.set(shardId, shard);
        }
        (shard.pages[shard.pages.length - 1] as LambdaKinesisRecord[]).push(record);
        newest = Math.max(newest, record.kinesis.approximateArrivalTimestamp);
        total++;
      }
      if (event) for (const shard of shards.values()) if (shard.pages.at(-1)?.length) shard.pages.push([]);
    }
  }
  const failures = failureLog(options.log, options.mapping.onEvent);
  const emulator = new KinesisMappingEmulator({
    ...options.mapping,
    clock: options.clock ?? new ManualClock(newest * 1000),
    ...failures.mapping,
  });
  const results: ShardResult[] = [];
  try {
    for (const [shardId, { streamArn, pages }] of shards)
      results.push(await emulator.runShard({ shardId, streamArn, pages: pages.filter((p) => p.length) }));
  } finally {
    failures.flush();
  }
  return { emulator, shards: results, records: total };
}

/** A replay file's lines as Lambda Kinesis records; a line that is not one is a ReplayFileError. */
async function* readKinesisReplayFile(
  file: string,
): AsyncGenerator<{ records: LambdaKinesisRecord[]; event: boolean }> {
  for await (const { value, lineNumber } of readJsonLines(file)) {
    const batch = (value as { Records?: unknown } | null)?.Records;
    const event = Array.isArray(batch);
    const records = (event ? batch : [value]).map((r) => kinesisRecord(r, file, lineNumber));
    yield { records, event };
  }
}

function kinesisRecord(value: unknown, file: string, line: number): LambdaKinesisRecord {
  const record = value as Partial<LambdaKinesisRecord> | null;
  const k = record?.kinesis;
  const problem =
    record === null || typeof record !== 'object' || Array.isArray(record)
      ? 'a line must be a Lambda Kinesis event or record object'
      : record.eventSource !== 'aws:kinesis' || !k
        ? `record ${record.eventID ?? '(no eventID)'} is not a Lambda Kinesis record (eventSource aws:kinesis, kinesis: {…}); a DynamoDB stream record goes to a function with a DynamoDB stream event`
        : typeof k.sequenceNumber !== 'string' || !/^\d+$/.test(k.sequenceNumber)
          ? `record ${record.eventID ?? '(no eventID)'} has no numeric kinesis.sequenceNumber`
          : typeof record.eventID !== 'string' || !record.eventID.endsWith(`:${k.sequenceNumber}`)
            ? `record ${record.eventID ?? '(no eventID)'}: eventID must be <shardId>:<sequenceNumber>`
            : typeof k.approximateArrivalTimestamp !== 'number' ||
                typeof k.data !== 'string' ||
                typeof k.partitionKey !== 'string'
              ? `record ${record.eventID} needs kinesis.data, partitionKey and approximateArrivalTimestamp`
              : undefined;
  if (problem) throw new ReplayFileError(file, line, problem);
  return record as LambdaKinesisRecord;
}
