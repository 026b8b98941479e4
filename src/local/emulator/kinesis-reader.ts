import {
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record as KinesisApiRecord,
  type KinesisClient,
  ListShardsCommand,
  type Shard,
} from '@aws-sdk/client-kinesis';
import { defineOptions } from '../../core/index.js';
import type { LambdaKinesisRecord } from '../../records/index.js';
import { fromKinesisApiRecord } from '../../records/kinesis-api-record.js';
import {
  KINESIS_STREAM_ARN_OPTION,
  kinesisStreamName,
  kinesisStreamRegion,
} from '../../records/kinesis-stream-arn.js';
import { CheckpointStore } from './checkpoint.js';
import { type Clock, systemClock } from './clock.js';
import type { ShardResult } from './emulator-log.js';
import { EmulatorStoppedError } from './errors.js';
import type { KinesisMappingEmulator } from './kinesis-emulator.js';
import { aborted } from './poller.js';

/** The calls the reader makes; a KinesisClient (see localKinesisClient), or a wrapper around one. */
export type KinesisApi = Pick<KinesisClient, 'send'>;

/** Options of the Kinesis shard reader: the client, stream, starting position and checkpoint. */
export interface KinesisShardReaderOptions {
  kinesis: KinesisApi;
  /** `arn:aws:kinesis:<region>:<account>:stream/<name>`. */
  streamArn: string;
  /** Where a shard starts without a checkpoint; default TRIM_HORIZON. */
  startingPosition?: 'TRIM_HORIZON' | 'LATEST';
  /** Durable per-shard positions; resume from it after a restart. */
  checkpointFile?: string;
  /**
   * Wait after an empty GetRecords page; default 1000 ms ("Lambda reads records from the data
   * stream and invokes your function synchronously … polls each shard … at a base rate of once
   * per second").
   */
  pollIntervalMs?: number;
  /** GetRecords Limit, 1–10000; default 10000 (Kinesis's maximum). */
  limit?: number;
  /** The mapping's role, as Lambda writes it into each record's invokeIdentityArn. */
  invokeIdentityArn?: string;
  clock?: Clock;
}

/** Options of one read of a Kinesis stream: abort signal and when to stop. */
export interface KinesisReadOptions {
  signal?: AbortSignal;
  /**
   * Stop once every shard is caught up (an empty page with MillisBehindLatest 0) or closed,
   * instead of polling forever. For replay and tests.
   */
  stopWhenCaughtUp?: boolean;
}

const readOptions = defineOptions<KinesisShardReaderOptions>()('KinesisShardReader', {
  kinesis: { kind: 'client', required: true },
  streamArn: KINESIS_STREAM_ARN_OPTION,
  startingPosition: { kind: 'enum', values: ['TRIM_HORIZON', 'LATEST'], default: 'TRIM_HORIZON' },
  checkpointFile: { kind: 'nonEmptyString' },
  pollIntervalMs: { kind: 'number', min: 0, default: 1000 },
  limit: { kind: 'integer', min: 1, max: 10_000, default: 10_000 },
  invokeIdentityArn: {
    kind: 'nonEmptyString',
    default: 'arn:aws:iam::000000000000:role/local-function-role',
  },
  clock: {
    kind: 'object',
    methods: ['now', 'sleep'],
    expected: 'a Clock (with now() and sleep())',
    default: systemClock,
  },
});

/**
 * Reads a Kinesis stream the way Lambda's standard-iterator poller does: every shard with
 * GetShardIterator and GetRecords, a parent before its children, from a starting position or a
 * checkpoint, each shard's records handed on in order as Lambda Kinesis records. Shards are listed
 * once at the start: a stream resharded while it runs needs a new run.
 */
export class KinesisShardReader {
  readonly streamArn: string;
  private readonly settings: ReturnType<typeof readOptions>;
  private readonly region: string;
  /** Calls name the stream by StreamName (see kinesisStreamName). */
  private readonly streamName: string;

  constructor(options: KinesisShardReaderOptions) {
    this.settings = readOptions(options);
    this.streamArn = this.settings.streamArn;
    this.region = kinesisStreamRegion(this.streamArn);
    this.streamName = kinesisStreamName(this.streamArn);
  }

  /**
   * Runs every shard through the emulator until stopped (signal) or, with `stopWhenCaughtUp`,
   * caught up. A batch still failing when stopped stays after the checkpoint for the next run.
   */
  async runEmulator(
    emulator: KinesisMappingEmulator,
    options: KinesisReadOptions = {},
  ): Promise<ShardResult[]> {
    const store = await CheckpointStore.open(this.streamArn, this.settings.checkpointFile);
    const shards = await this.listShards();
    const stopping = new AbortController();
    const onAbort = () => {
      stopping.abort();
      emulator.stop();
    };
    if (options.signal?.aborted) onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    /** Per shard: its result when it ran, and whether it is read to its end (its children may start). */
    const tasks = new Map<string, Promise<{ result?: ShardResult; finished: boolean }>>();
    const start = (shard: Shard): Promise<{ result?: ShardResult; finished: boolean }> => {
      const id = shard.ShardId as string;
      let task = tasks.get(id);
      if (task) return task;
      const parent = shards.find((s) => s.ShardId === shard.ParentShardId);
      task = (async () => {
        // A parent's records come first: its children start when it has been read to its end.
        if (parent && !(await start(parent)).finished) return { finished: false };
        if (store.get(id)?.finished) return { finished: true };
        const state = { closed: false };
        try {
          const result = await emulator.runShard({
            shardId: id,
            streamArn: this.streamArn,
            pages: this.pages(id, store, state, options, stopping.signal),
            onCheckpoint: (sequenceNumber) => store.commit(id, sequenceNumber),
            shardEnded: () => state.closed,
          });
          const finished = state.closed && !stopping.signal.aborted;
          if (finished) await store.finish(id);
          return { result, finished };
        } catch (error) {
          if (error instanceof EmulatorStoppedError && stopping.signal.aborted) return { finished: false };
          // One shard failed: the others stop reading, as the whole mapping would.
          stopping.abort();
          emulator.stop();
          throw error;
        }
      })();
      tasks.set(id, task);
      return task;
    };
    try {
      const ran = await Promise.all(shards.map(start));
      return ran.flatMap((r) => (r.result ? [r.result] : []));
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
    }
  }

  private async listShards(): Promise<Shard[]> {
    const shards: Shard[] = [];
    let nextToken: string | undefined;
    do {
      const page = await this.settings.kinesis.send(
        new ListShardsCommand(nextToken ? { NextToken: nextToken } : { StreamName: this.streamName }),
      );
      shards.push(...(page.Shards ?? []));
      nextToken = page.NextToken;
    } while (nextToken);
    return shards;
  }

  private async *pages(
    shardId: string,
    store: CheckpointStore,
    state: { closed: boolean },
    options: KinesisReadOptions,
    stopped: AbortSignal,
  ): AsyncGenerator<LambdaKinesisRecord[]> {
    const saved = store.get(shardId)?.sequenceNumber;
    const { kinesis, limit, pollIntervalMs, clock } = this.settings;
    let iterator = (
      await kinesis.send(
        new GetShardIteratorCommand({
          StreamName: this.streamName,
          ShardId: shardId,
          ...(saved !== undefined
            ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', StartingSequenceNumber: saved }
            : { ShardIteratorType: this.settings.startingPosition }),
        }),
      )
    ).ShardIterator;
    const stop = aborted(stopped);
    while (iterator !== undefined && !stopped.aborted) {
      const page = await kinesis.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: limit }));
      const records = (page.Records ?? []).map((r) => this.lambdaRecord(shardId, r));
      iterator = page.NextShardIterator ?? undefined;
      // No next iterator: the shard is closed and read to its end.
      if (iterator === undefined) state.closed = true;
      yield records;
      if (records.length === 0 && iterator !== undefined) {
        if (options.stopWhenCaughtUp && (page.MillisBehindLatest ?? 0) === 0) return;
        await Promise.race([clock.sleep(pollIntervalMs), stop]);
      }
    }
  }

  private lambdaRecord(shardId: string, record: KinesisApiRecord): LambdaKinesisRecord {
    return fromKinesisApiRecord(record, {
      shardId,
      streamArn: this.streamArn,
      awsRegion: this.region,
      invokeIdentityArn: this.settings.invokeIdentityArn,
    });
  }
}
