import {
  DescribeStreamCommand,
  type DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type Shard,
  type ShardIteratorType,
} from '@aws-sdk/client-dynamodb-streams';
import { defineOptions } from '../../core/index.js';
import type { LambdaStreamRecord } from '../../records/index.js';
import { toLambdaRecord } from '../../records/index.js';
import { CheckpointStore } from './checkpoint.js';
import { type Clock, systemClock } from './clock.js';
import type { EventSourceMappingEmulator, ShardResult } from './emulator.js';
import { EmulatorStoppedError } from './errors.js';

/** Where the poller starts reading a shard. */
export type StartingPosition =
  | 'TRIM_HORIZON'
  | 'LATEST'
  | { atSequenceNumber: string }
  | { afterSequenceNumber: string };

/** The calls the poller makes; a DynamoDBStreamsClient, or a wrapper around one. */
export type StreamsApi = Pick<DynamoDBStreamsClient, 'send'>;

/** Options of StreamPoller: the streams client, the stream, where to start and how often to poll. */
export interface StreamPollerOptions {
  streams: StreamsApi;
  streamArn: string;
  /**
   * Where a shard starts without a checkpoint; default TRIM_HORIZON. A child whose parent this
   * poller read starts at its beginning (no record lost across a split); a child whose parent was
   * skipped (it ended before the position, or was already closed under LATEST) takes the position.
   */
  startingPosition?: StartingPosition;
  /** Durable per-shard positions; resume from it after a restart. */
  checkpointFile?: string;
  /** Wait after an empty GetRecords page; default 250 ms (Lambda polls a shard about 4 times a second). */
  pollIntervalMs?: number;
  /** Wait between DescribeStream calls looking for new shards; default 1000 ms. */
  describeIntervalMs?: number;
  /** GetRecords Limit, 1–1000; default 1000. */
  limit?: number;
  clock?: Clock;
  onEvent?: (event: PollerEvent) => void;
}

const readOptions = defineOptions<StreamPollerOptions>()('StreamPoller', {
  streams: { kind: 'client', required: true },
  streamArn: {
    kind: 'custom',
    expected: 'a stream ARN',
    check: (value) => typeof value === 'string' && value.includes('/stream/'),
    required: true,
  },
  startingPosition: {
    kind: 'custom',
    expected: 'TRIM_HORIZON, LATEST, {atSequenceNumber} or {afterSequenceNumber}',
    check: (value) =>
      value === 'TRIM_HORIZON' ||
      value === 'LATEST' ||
      (typeof value === 'object' &&
        value !== null &&
        ('atSequenceNumber' in value || 'afterSequenceNumber' in value)),
    default: 'TRIM_HORIZON',
  },
  checkpointFile: { kind: 'nonEmptyString' },
  pollIntervalMs: { kind: 'number', min: 0, default: 250 },
  describeIntervalMs: { kind: 'number', min: 0, default: 1000 },
  limit: { kind: 'integer', min: 1, max: 1000, default: 1000 },
  clock: {
    kind: 'object',
    methods: ['now', 'sleep'],
    expected: 'a Clock (with now() and sleep())',
    default: systemClock,
  },
  onEvent: { kind: 'function' },
});

const readPollRunOptions = defineOptions<PollRunOptions>()('StreamPoller.run', {
  signal: { kind: 'object', methods: ['addEventListener'], expected: 'an AbortSignal' },
  stopWhenCaughtUp: { kind: 'boolean' },
  emptyPagesToStop: { kind: 'integer', min: 1, max: 10_000 },
});

/** What the stream poller reports while it runs: shards started, batches, ends. */
export type PollerEvent =
  | {
      type: 'shard-start';
      shardId: string;
      parentShardId?: string;
      iteratorType: ShardIteratorType;
      sequenceNumber?: string;
    }
  | { type: 'shard-end'; shardId: string; finished: boolean }
  | { type: 'iterator-expired'; shardId: string; resumeAfter?: string }
  | { type: 'trimmed'; shardId: string; sequenceNumber?: string };

/** One shard of a stream as the poller reads it: its id, parent and stream. */
export interface ShardStream {
  shardId: string;
  parentShardId: string | undefined;
  streamArn: string;
  /** GetRecords pages in the Lambda shape; empty pages mark "caught up for now". */
  pages: AsyncIterable<LambdaStreamRecord[]>;
  /** Record that everything up to this sequence number is handled (written to the checkpoint). */
  commit(sequenceNumber: string): Promise<void>;
  /** Aborts when the poller stops: the caller's signal, or another shard failed. */
  stopped: AbortSignal;
  /** Whether the pages ended at the shard's end (it is closed), not because the poller stopped or caught up. */
  closed(): boolean;
}

/** Options of one poller run: abort signal and when to stop. */
export interface PollRunOptions {
  signal?: AbortSignal;
  /**
   * Stop once every readable shard is caught up (an empty page) or closed, instead of polling
   * forever. For capture, replay and tests against DynamoDB Local.
   */
  stopWhenCaughtUp?: boolean;
  /**
   * With `stopWhenCaughtUp`: how many empty GetRecords pages in a row mean a shard is caught up;
   * default 1. Right for DynamoDB Local, whose empty page means the end of what was written; on
   * AWS, GetRecords also returns empty pages in the middle of a shard, so wait for several (a
   * closed shard still ends at once, at its end).
   */
  emptyPagesToStop?: number;
}

interface IteratorSpec {
  type: ShardIteratorType;
  sequenceNumber?: string;
}

/**
 * Reads a DynamoDB stream the way Lambda's poller does: every shard, parents fully before their
 * children, from a starting position or a checkpoint, surviving expired iterators and trimmed
 * data, and handing each shard's records on in order, in the Lambda event shape.
 */
export class StreamPoller {
  readonly streamArn: string;
  /** The options, checked, with defaults applied. */
  private readonly settings: ReturnType<typeof readOptions>;
  private store: CheckpointStore | undefined;

  constructor(options: StreamPollerOptions) {
    this.settings = readOptions(options);
    this.streamArn = this.settings.streamArn;
  }

  /** Current checkpoint (after `run` has opened it). */
  checkpoint() {
    return this.store?.snapshot();
  }

  /**
   * Feeds every shard through an event source mapping emulator, checkpointing what it handled.
   * Stopping (the signal, or another shard failing) also stops the emulator's retries: a batch
   * still failing then stays after the checkpoint, for the next run, instead of holding the
   * poller forever (Lambda's default is to retry until the record expires).
   */
  async runEmulator(
    emulator: EventSourceMappingEmulator,
    options: PollRunOptions = {},
  ): Promise<ShardResult[]> {
    const results: ShardResult[] = [];
    await this.run(async (shard) => {
      const stop = () => emulator.stop();
      if (shard.stopped.aborted) stop();
      shard.stopped.addEventListener('abort', stop, { once: true });
      try {
        results.push(
          await emulator.runShard({
            shardId: shard.shardId,
            streamArn: shard.streamArn,
            pages: shard.pages,
            onCheckpoint: (sequenceNumber) => shard.commit(sequenceNumber),
            // A tumbling window open at the end closes only with the shard, as in Lambda.
            shardEnded: () => shard.closed(),
          }),
        );
      } catch (error) {
        // Stopped by the poller: the unsettled batch stays after the checkpoint, and the shard is
        // not marked finished (see readShard), so the next run delivers it.
        if (!(error instanceof EmulatorStoppedError && shard.stopped.aborted)) throw error;
      } finally {
        shard.stopped.removeEventListener('abort', stop);
      }
    }, options);
    return results;
  }

  /**
   * Calls `consume` once per shard, when the shard may be read (its parent finished). Shards run
   * concurrently; records within one are in order. Resolves when stopped (signal) or caught up.
   * A closed shard is checkpointed finished (its children may start) only when `consume` returned
   * normally after reading its last page and the poller was not stopped meanwhile.
   */
  async run(consume: (shard: ShardStream) => Promise<void>, options: PollRunOptions = {}): Promise<void> {
    readPollRunOptions(options);
    const store = await CheckpointStore.open(this.streamArn, this.settings.checkpointFile);
    this.store = store;
    // The caller's signal, or the first shard failure: either way every shard stops reading, so
    // a failure is reported instead of waiting behind shards that poll forever.
    const stopping = new AbortController();
    const onAbort = () => stopping.abort();
    if (options.signal?.aborted) stopping.abort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const signal = stopping.signal;
    const stop = aborted(signal);
    const shardOptions: PollRunOptions = { ...options, signal };
    const running = new Map<string, Promise<void>>();
    const ended = new Set<string>();
    let failure: unknown;
    try {
      while (!signal.aborted && failure === undefined) {
        const shards = await this.describe();
        const byId = new Map(shards.map((s) => [s.ShardId as string, s]));
        for (const shard of shards) {
          const shardId = shard.ShardId as string;
          if (running.has(shardId) || ended.has(shardId) || store.get(shardId)?.finished) continue;
          const parent = shard.ParentShardId;
          const parentCheckpoint = parent ? store.get(parent) : undefined;
          // A parent no longer described has been trimmed away: its child is where the data is.
          if (parent && byId.has(parent) && !parentCheckpoint?.finished) continue;
          // Only a parent this poller actually read hands its child over at TRIM_HORIZON — the
          // checkpoint remembers that even after the parent has aged out of the listing; a skipped
          // parent, or one this poller never saw, leaves the starting position to the child.
          const afterReadParent = !!parentCheckpoint?.finished && !parentCheckpoint.skipped;
          const task = this.readShard(shard, afterReadParent, store, consume, shardOptions, stop, signal)
            .then(
              () => undefined,
              (error: unknown) => {
                failure ??= error;
                stopping.abort();
              },
            )
            .finally(() => {
              running.delete(shardId);
              ended.add(shardId);
            });
          running.set(shardId, task);
        }
        if (running.size === 0 && options.stopWhenCaughtUp) break;
        await Promise.race([
          ...running.values(),
          this.settings.clock.sleep(this.settings.describeIntervalMs),
          stop,
        ]);
      }
    } catch (error) {
      // DescribeStream failed: the shards already running must not go on polling unobserved.
      failure ??= error;
      stopping.abort();
    }
    await Promise.all(running.values());
    options.signal?.removeEventListener('abort', onAbort);
    if (failure !== undefined) throw failure;
  }

  private async describe(): Promise<Shard[]> {
    const shards: Shard[] = [];
    let exclusiveStartShardId: string | undefined;
    do {
      const page = await this.settings.streams.send(
        new DescribeStreamCommand({
          StreamArn: this.streamArn,
          ExclusiveStartShardId: exclusiveStartShardId,
        }),
      );
      shards.push(...(page.StreamDescription?.Shards ?? []));
      exclusiveStartShardId = page.StreamDescription?.LastEvaluatedShardId;
    } while (exclusiveStartShardId);
    return shards;
  }

  private initialPosition(
    shard: Shard,
    afterReadParent: boolean,
    store: CheckpointStore,
  ): IteratorSpec | 'skip' {
    const saved = store.get(shard.ShardId as string)?.sequenceNumber;
    if (saved !== undefined) return { type: 'AFTER_SEQUENCE_NUMBER', sequenceNumber: saved };
    if (afterReadParent) return { type: 'TRIM_HORIZON' };
    const position = this.settings.startingPosition;
    const end = shard.SequenceNumberRange?.EndingSequenceNumber;
    // LATEST of a shard already closed is its end: nothing to read, and its child is where new
    // records arrive, so the child must take LATEST too.
    if (position === 'LATEST') return end !== undefined ? 'skip' : { type: 'LATEST' };
    if (position === 'TRIM_HORIZON') return { type: position };
    const at = 'atSequenceNumber' in position;
    const sequenceNumber = at ? position.atSequenceNumber : position.afterSequenceNumber;
    const wanted = BigInt(sequenceNumber);
    if (end !== undefined && BigInt(end) < wanted) return 'skip';
    const start = shard.SequenceNumberRange?.StartingSequenceNumber;
    if (start !== undefined && BigInt(start) > wanted) return { type: 'TRIM_HORIZON' };
    return { type: at ? 'AT_SEQUENCE_NUMBER' : 'AFTER_SEQUENCE_NUMBER', sequenceNumber };
  }

  private async readShard(
    shard: Shard,
    afterReadParent: boolean,
    store: CheckpointStore,
    consume: (shard: ShardStream) => Promise<void>,
    options: PollRunOptions,
    stop: Promise<void>,
    stopped: AbortSignal,
  ): Promise<void> {
    const shardId = shard.ShardId as string;
    const initial = this.initialPosition(shard, afterReadParent, store);
    if (initial === 'skip') {
      await store.finish(shardId, { skipped: true });
      this.settings.onEvent?.({ type: 'shard-end', shardId, finished: true });
      return;
    }
    this.settings.onEvent?.({
      type: 'shard-start',
      shardId,
      ...(shard.ParentShardId ? { parentShardId: shard.ParentShardId } : {}),
      iteratorType: initial.type,
      ...(initial.sequenceNumber ? { sequenceNumber: initial.sequenceNumber } : {}),
    });
    const state = { closed: false };
    await consume({
      shardId,
      parentShardId: shard.ParentShardId,
      streamArn: this.streamArn,
      pages: this.pages(shardId, initial, state, options, stop),
      commit: (sequenceNumber) => store.commit(shardId, sequenceNumber),
      stopped,
      closed: () => state.closed,
    });
    // Reaching the closed end only means the last page was pulled, not that its records were
    // handled: the emulator invokes a batching window's leftover after the pages end, and a stop
    // during that batch returns here normally (runEmulator swallows EmulatorStoppedError). A shard
    // the poller stopped is therefore never finished; the next run reads it on from its
    // checkpoint, where a closed shard with nothing left costs one empty page.
    const finished = state.closed && !stopped.aborted;
    if (finished) await store.finish(shardId);
    this.settings.onEvent?.({ type: 'shard-end', shardId, finished });
  }

  private async *pages(
    shardId: string,
    initial: IteratorSpec,
    state: { closed: boolean },
    options: PollRunOptions,
    stop: Promise<void>,
  ): AsyncGenerator<LambdaStreamRecord[]> {
    const streamArn = this.streamArn;
    let lastRead: string | undefined;
    let emptyPages = 0;
    const emptyPagesToStop = options.emptyPagesToStop ?? 1;
    let iterator: string | undefined = await this.iterator(shardId, initial);
    while (iterator && !options.signal?.aborted) {
      let page: Awaited<ReturnType<typeof this.getRecords>>;
      try {
        page = await this.getRecords(iterator);
      } catch (error) {
        const name = (error as Error).name;
        if (name === 'ExpiredIteratorException') {
          this.settings.onEvent?.({
            type: 'iterator-expired',
            shardId,
            ...(lastRead ? { resumeAfter: lastRead } : {}),
          });
          iterator = await this.iterator(
            shardId,
            lastRead ? { type: 'AFTER_SEQUENCE_NUMBER', sequenceNumber: lastRead } : initial,
          );
          continue;
        }
        if (name === 'TrimmedDataAccessException') {
          this.settings.onEvent?.({
            type: 'trimmed',
            shardId,
            ...(lastRead ? { sequenceNumber: lastRead } : {}),
          });
          iterator = await this.iterator(shardId, { type: 'TRIM_HORIZON' });
          continue;
        }
        throw error;
      }
      const sdkRecords = page.Records ?? [];
      const records = new Array<LambdaStreamRecord>(sdkRecords.length);
      for (let i = 0; i < sdkRecords.length; i++)
        records[i] = toLambdaRecord(sdkRecords[i] as never, { streamArn });
      if (records.length > 0) {
        lastRead = records[records.length - 1]?.dynamodb.SequenceNumber;
        emptyPages = 0;
      }
      yield records;
      iterator = page.NextShardIterator;
      if (!iterator) {
        state.closed = true;
        return;
      }
      if (records.length === 0) {
        if (options.stopWhenCaughtUp && ++emptyPages >= emptyPagesToStop) return;
        await Promise.race([this.settings.clock.sleep(this.settings.pollIntervalMs), stop]);
      }
    }
  }

  private getRecords(iterator: string) {
    return this.settings.streams.send(
      new GetRecordsCommand({ ShardIterator: iterator, Limit: this.settings.limit }),
    );
  }

  private async iterator(shardId: string, spec: IteratorSpec): Promise<string | undefined> {
    try {
      const out = await this.settings.streams.send(
        new GetShardIteratorCommand({
          StreamArn: this.streamArn,
          ShardId: shardId,
          ShardIteratorType: spec.type,
          SequenceNumber: spec.sequenceNumber,
        }),
      );
      return out.ShardIterator;
    } catch (error) {
      if ((error as Error).name === 'TrimmedDataAccessException' && spec.type !== 'TRIM_HORIZON') {
        this.settings.onEvent?.({
          type: 'trimmed',
          shardId,
          ...(spec.sequenceNumber ? { sequenceNumber: spec.sequenceNumber } : {}),
        });
        return this.iterator(shardId, { type: 'TRIM_HORIZON' });
      }
      throw error;
    }
  }
}

/** Settles when `signal` aborts (never without one). */
export function aborted(signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return new Promise(() => undefined);
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
