import { PutRecordsCommand, type PutRecordsRequestEntry } from '@aws-sdk/client-kinesis';
import { defineOptions } from '../../core/index.js';
import type { LambdaStreamRecord } from '../../records/index.js';
import { kinesisChangeRecord, kinesisPartitionKey } from '../../records/kinesis-encode.js';
import {
  KINESIS_STREAM_ARN_OPTION,
  kinesisStreamName,
  kinesisStreamRegion,
} from '../../records/kinesis-stream-arn.js';
import { KinesisBridgeError } from './errors.js';
import type { KinesisApi } from './kinesis-reader.js';
import { type PollRunOptions, type StartingPosition, StreamPoller, type StreamsApi } from './poller.js';

/**
 * Faults the bridge injects, from a seed (the same seed, the same faults): what Kinesis Data
 * Streams for DynamoDB may do to a table's changes ("records … might appear … duplicated and out
 * of order"), so tests can show a handler copes.
 */
export interface KinesisBridgeFaults {
  /** Seeds the choices; any integer. */
  seed: number;
  /** Chance (0–1) that a change is put a second time, after the rest of its group. Default 0. */
  duplicateRate?: number;
  /** Changes are put shuffled within consecutive groups of this many (1: in order). Default 1. */
  reorderWindow?: number;
}

/** Options of the Kinesis bridge: the table's stream read into a local Kinesis stream. */
export interface KinesisBridgeOptions {
  /** The DynamoDB Streams client of the table's stream (DynamoDB Local's). */
  streams: StreamsApi;
  /** The table's DynamoDB stream ARN, read with the stream poller. */
  tableStreamArn: string;
  tableName: string;
  kinesis: KinesisApi;
  /** The destination: `arn:aws:kinesis:<region>:<account>:stream/<name>`. */
  kinesisStreamArn: string;
  /** The table's ApproximateCreationDateTimePrecision; default MILLISECOND (AWS's default). */
  precision?: 'MILLISECOND' | 'MICROSECOND';
  /** Where the table's stream is read from without a checkpoint; default TRIM_HORIZON. */
  startingPosition?: StartingPosition;
  /** Durable positions in the table's stream: a restarted bridge forwards nothing twice. */
  checkpointFile?: string;
  /** Wait after an empty page of the table's stream; default 250 ms. */
  pollIntervalMs?: number;
  faults?: KinesisBridgeFaults;
}

/** What the Kinesis bridge did: changes read and records put. */
export interface KinesisBridgeResult {
  /** Changes read from the table's stream. */
  changes: number;
  /** Kinesis records put (changes plus injected duplicates). */
  put: number;
  duplicates: number;
}

const readFaults = defineOptions<KinesisBridgeFaults>()('KinesisBridge.faults', {
  seed: { kind: 'integer', required: true },
  duplicateRate: { kind: 'number', min: 0, max: 1, default: 0 },
  reorderWindow: { kind: 'integer', min: 1, max: 10_000, default: 1 },
});

const readOptions = defineOptions<KinesisBridgeOptions>()('KinesisBridge', {
  streams: { kind: 'client', required: true },
  tableStreamArn: { kind: 'nonEmptyString', required: true },
  tableName: { kind: 'nonEmptyString', required: true },
  kinesis: { kind: 'client', required: true },
  kinesisStreamArn: KINESIS_STREAM_ARN_OPTION,
  precision: { kind: 'enum', values: ['MILLISECOND', 'MICROSECOND'], default: 'MILLISECOND' },
  startingPosition: {
    kind: 'custom',
    expected: 'TRIM_HORIZON, LATEST, {atSequenceNumber} or {afterSequenceNumber}',
    check: (value) => value !== undefined,
  },
  checkpointFile: { kind: 'nonEmptyString' },
  pollIntervalMs: { kind: 'number', min: 0, default: 250 },
  faults: { kind: 'custom', expected: 'an object with a seed', check: (value) => typeof value === 'object' },
});

/** PutRecords takes at most 500 records a call. */
const MAX_PUT_RECORDS = 500;

/** A seeded PRNG (mulberry32): deterministic faults without a dependency. */
function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A table's Kinesis streaming destination, locally: reads the table's DynamoDB stream (DynamoDB
 * Local's, through the stream poller) and puts each change into a Kinesis stream as Kinesis Data
 * Streams for DynamoDB writes it — the change record as JSON (awsRegion, eventID, eventName,
 * userIdentity, recordFormat, tableName, dynamodb with ApproximateCreationDateTime at the table's
 * precision, Keys, NewImage, OldImage, SizeBytes; eventSource aws:dynamodb), the partition key a
 * hash of the item's keys. Optional faults add duplicates and reordering.
 */
export class KinesisBridge {
  private readonly settings: ReturnType<typeof readOptions>;
  private readonly faults: ReturnType<typeof readFaults> | undefined;
  private readonly streamName: string;
  /**
   * The change records' awsRegion. A streaming destination is in its table's region; DynamoDB
   * Local calls its region `ddblocal`, so the Kinesis stream's region stands in for the table's.
   */
  private readonly region: string;

  constructor(options: KinesisBridgeOptions) {
    this.settings = readOptions(options);
    this.faults = this.settings.faults === undefined ? undefined : readFaults(this.settings.faults);
    const arn = this.settings.kinesisStreamArn;
    this.streamName = kinesisStreamName(arn);
    this.region = kinesisStreamRegion(arn);
  }

  /** Forwards until stopped (signal) or, with `stopWhenCaughtUp`, until the table's stream is caught up. */
  async run(options: PollRunOptions = {}): Promise<KinesisBridgeResult> {
    const s = this.settings;
    const poller = new StreamPoller({
      streams: s.streams,
      streamArn: s.tableStreamArn,
      pollIntervalMs: s.pollIntervalMs,
      ...(s.startingPosition ? { startingPosition: s.startingPosition } : {}),
      ...(s.checkpointFile ? { checkpointFile: s.checkpointFile } : {}),
    });
    const result: KinesisBridgeResult = { changes: 0, put: 0, duplicates: 0 };
    const random = this.faults ? seededRandom(this.faults.seed) : undefined;
    await poller.run(async (shard) => {
      // DynamoDB Local stamps whole seconds; the destination's precision is finer. Within a shard
      // (one item's changes are always in one) each stamp is at least one unit after the last, so
      // the creation time orders an item's changes as AWS's does.
      let lastStamp = 0;
      for await (const page of shard.pages) {
        if (page.length === 0) continue;
        const entries = page.map((record) => {
          const unit = s.precision === 'MICROSECOND' ? 1e6 : 1e3;
          const stamp = Math.max(
            Math.round((record.dynamodb.ApproximateCreationDateTime ?? 0) * unit),
            lastStamp + 1,
          );
          lastStamp = stamp;
          return this.entry(record, stamp);
        });
        const put = random ? this.withFaults(entries, random, result) : entries;
        await this.put(put);
        result.changes += page.length;
        result.put += put.length;
        await shard.commit((page[page.length - 1] as LambdaStreamRecord).dynamodb.SequenceNumber);
      }
    }, options);
    return result;
  }

  private entry(record: LambdaStreamRecord, creationTime: number): PutRecordsRequestEntry {
    const change = kinesisChangeRecord(record, {
      tableName: this.settings.tableName,
      creationTime,
      awsRegion: this.region,
    });
    return {
      Data: Buffer.from(JSON.stringify(change), 'utf8'),
      PartitionKey: kinesisPartitionKey(record.dynamodb.Keys),
    };
  }

  /** Shuffles each group of `reorderWindow` entries, then puts the group's chosen duplicates after it. */
  private withFaults(
    entries: PutRecordsRequestEntry[],
    random: () => number,
    result: KinesisBridgeResult,
  ): PutRecordsRequestEntry[] {
    const { duplicateRate = 0, reorderWindow = 1 } = this.faults ?? {};
    const out: PutRecordsRequestEntry[] = [];
    for (let start = 0; start < entries.length; start += reorderWindow) {
      const group = entries.slice(start, start + reorderWindow);
      for (let i = group.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [group[i], group[j]] = [group[j] as PutRecordsRequestEntry, group[i] as PutRecordsRequestEntry];
      }
      const again = group.filter(() => random() < duplicateRate);
      result.duplicates += again.length;
      out.push(...group, ...again);
    }
    return out;
  }

  private async put(entries: PutRecordsRequestEntry[]): Promise<void> {
    for (let i = 0; i < entries.length; i += MAX_PUT_RECORDS) {
      const chunk = entries.slice(i, i + MAX_PUT_RECORDS);
      const answer = await this.settings.kinesis.send(
        new PutRecordsCommand({ StreamName: this.streamName, Records: chunk }),
      );
      // A partly failed put cannot be retried without reordering what it put: the run stops, and
      // the table stream's checkpoint (not advanced) puts the page again on the next run.
      if ((answer.FailedRecordCount ?? 0) > 0) {
        const failed = answer.Records?.find((r) => r.ErrorCode !== undefined);
        throw new KinesisBridgeError(
          this.streamName,
          `${answer.FailedRecordCount} of ${chunk.length} records were refused (${failed?.ErrorCode ?? 'no error code'})`,
        );
      }
    }
  }
}
