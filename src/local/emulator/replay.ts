import { mkdir, open } from 'node:fs/promises';
import { dirname } from 'node:path';
import { defineOptions } from '../../core/index.js';
import { OWNER_ONLY } from '../../core/write-file-atomic.js';
import { type LambdaStreamRecord, toLambdaRecord } from '../../records/index.js';
import { isLocalEndpoint } from '../servers/endpoint.js';
import { type Clock, ManualClock } from './clock.js';
import {
  type EmulatorEvent,
  EventSourceMappingEmulator,
  type EventSourceMappingOptions,
  type ShardResult,
} from './emulator.js';
import { ReplayFileError } from './errors.js';
import { type PollRunOptions, type StartingPosition, StreamPoller, type StreamsApi } from './poller.js';
import { readJsonLines } from './replay-lines.js';

/** Options of replay: the JSONL files and the event source mapping to replay through. */
export interface ReplayOptions {
  /** JSONL files: each line a Lambda event (`{Records: [...]}`) or one captured GetRecords record. */
  files: string | string[];
  /** The event source mapping to replay through (its clock defaults to the replay clock). */
  mapping: Omit<EventSourceMappingOptions, 'clock'>;
  /**
   * Defaults to a ManualClock at the newest record's creation time, so record-age rules judge
   * the data against itself and a replay gives the same result whenever it runs.
   */
  clock?: Clock;
  /** Records per page handed to the emulator for captured records; default 1000 (a GetRecords page). */
  pageSize?: number;
  /** Shard for Lambda-event lines (they carry none); default `shardId-replay-00000000`. */
  shardId?: string;
  onProgress?: (progress: { handled: number; total: number }) => void;
  /**
   * Where the replay reports failed invocations, one line each (`failureLine`). A batch retried
   * without end fails the same way every time, so a run of identical lines is written once, and
   * once more with "(repeated N times)" when the run ends (see `RepeatedLineWriter`). The
   * mapping's `onEvent` still sees every event.
   */
  log?: (line: string) => void;
}

/** What replay did: the emulator, per-shard results and record count. */
export interface ReplayResult {
  emulator: EventSourceMappingEmulator;
  shards: ShardResult[];
  records: number;
}

interface ShardFeed {
  shardId: string;
  streamArn: string;
  pages: LambdaStreamRecord[][];
  count: number;
  /** The last page is a pack of captured records (still filling), not a Lambda event's batch. */
  packing: boolean;
}

const DEFAULT_SHARD = 'shardId-replay-00000000';

const readReplayOptions = defineOptions<ReplayOptions>()('replay', {
  files: {
    kind: 'custom',
    expected: 'a file name or a list of them',
    check: (value) => typeof value === 'string' || Array.isArray(value),
    required: true,
  },
  // The emulator reads the mapping's own options.
  mapping: { kind: 'object', required: true },
  clock: { kind: 'object', methods: ['now', 'sleep'], expected: 'a Clock (with now() and sleep())' },
  pageSize: { kind: 'integer', min: 1, default: 1000 },
  shardId: { kind: 'nonEmptyString', default: DEFAULT_SHARD },
  onProgress: { kind: 'function' },
  log: { kind: 'function' },
});

/**
 * Replays files through the event source mapping emulator: shards in the order they first
 * appear, records in file order, each shard run to completion before the next.
 */
export async function replay(options: ReplayOptions): Promise<ReplayResult> {
  const { pageSize, shardId: defaultShard } = readReplayOptions(options);
  const files = typeof options.files === 'string' ? [options.files] : options.files;
  const feeds = new Map<string, ShardFeed>();
  let newest = 0;
  let total = 0;
  for (const file of files) {
    for await (const { records, shardId, streamArn, event } of readReplayFile(file, defaultShard)) {
      let feed = feeds.get(shardId);
      if (!feed) {
        feed = { shardId, streamArn: streamArn ?? '', pages: [], count: 0, packing: false };
        feeds.set(shardId, feed);
      }
      if (!feed.streamArn && streamArn) feed.streamArn = streamArn;
      for (const record of records) {
        const created = record.dynamodb.ApproximateCreationDateTime;
        if (created !== undefined && created > newest) newest = created;
      }
      // Lambda-event lines keep their batch as a page; captured records are packed into pages.
      const last = feed.pages[feed.pages.length - 1];
      if (!event && feed.packing && last && last.length < pageSize) last.push(...records);
      else feed.pages.push(event ? records : [...records]);
      feed.packing = !event;
      feed.count += records.length;
      total += records.length;
    }
  }
  const clock = options.clock ?? new ManualClock(newest * 1000);
  const failures = failureLog(options.log, options.mapping.onEvent);
  const emulator = new EventSourceMappingEmulator({ ...options.mapping, clock, ...failures.mapping });
  const shards: ShardResult[] = [];
  try {
    await replayShards(emulator, feeds, total, options.onProgress, shards);
  } finally {
    // A run ended by ReplayStalledError still reports how often its last error repeated.
    failures.flush();
  }
  return { emulator, shards, records: total };
}

async function replayShards(
  emulator: EventSourceMappingEmulator,
  feeds: Map<string, ShardFeed>,
  total: number,
  onProgress: ReplayOptions['onProgress'],
  shards: ShardResult[],
): Promise<void> {
  let handledBefore = 0;
  for (const feed of feeds.values()) {
    const positions = new Map<string, number>();
    let n = 0;
    for (const page of feed.pages) for (const r of page) positions.set(r.dynamodb.SequenceNumber, ++n);
    const result = await emulator.runShard({
      shardId: feed.shardId,
      streamArn: feed.streamArn,
      pages: feed.pages,
      onCheckpoint: (sequenceNumber) =>
        onProgress?.({ handled: handledBefore + (positions.get(sequenceNumber) ?? 0), total }),
    });
    handledBefore += feed.count;
    shards.push(result);
  }
}

/**
 * The line a failed invocation is reported by, or undefined for any other event. It names the
 * shard and the error but not the batch, so the same failure of a batch and of its bisected halves
 * reads the same and collapses; a partial batch response names the record it reported instead.
 */
export function failureLine(event: EmulatorEvent): string | undefined {
  if (event.type !== 'response' || event.outcome === 'success') return undefined;
  if (event.outcome === 'partial-failure')
    return `${event.shardId}: partial-failure from ${event.failedSequenceNumber ?? '?'}${event.error ? `: ${event.error}` : ''}`;
  return `${event.shardId}: ${event.outcome}: ${event.error ?? ''}`;
}

/**
 * A replay's report of failed invocations to `log`, one line each (`failureLine`), repeats
 * collapsed: `mapping` is the emulator's onEvent, passing every event on to the mapping's own
 * `onEvent` too, and `flush()` ends the last run of repeats. Without a log, `mapping` is empty and
 * the mapping's `onEvent` stays as it is.
 */
export function failureLog(
  log: ((line: string) => void) | undefined,
  onEvent: ((event: EmulatorEvent) => void) | undefined,
): { mapping: { onEvent?: (event: EmulatorEvent) => void }; flush(): void } {
  if (log === undefined) return { mapping: {}, flush: () => {} };
  const writer = new RepeatedLineWriter(log);
  return {
    mapping: {
      onEvent: (event) => {
        onEvent?.(event);
        const line = failureLine(event);
        if (line !== undefined) writer.line(line);
      },
    },
    flush: () => writer.flush(),
  };
}

/**
 * Writes lines, collapsing each run of identical consecutive ones: the first is written at once
 * (a long run shows when it starts, not when it ends), and when a different line arrives or on
 * `flush()`, the line again followed by "(repeated N times)", N counting every occurrence. A run
 * of one is written once.
 */
export class RepeatedLineWriter {
  private last: string | undefined;
  private count = 0;

  constructor(private readonly write: (line: string) => void) {}

  line(text: string): void {
    if (text === this.last) {
      this.count++;
      return;
    }
    this.flush();
    this.last = text;
    this.count = 1;
    this.write(text);
  }

  /** Ends the current run: its count is written now, and the next line starts a new run. */
  flush(): void {
    if (this.last !== undefined && this.count > 1) this.write(`${this.last} (repeated ${this.count} times)`);
    this.last = undefined;
    this.count = 0;
  }
}

interface ReplayChunk {
  records: LambdaStreamRecord[];
  shardId: string;
  streamArn: string | undefined;
  /** The line was a whole Lambda event (one batch), not a single captured record. */
  event: boolean;
}

/** Reads a replay file line by line; each line becomes records in the Lambda shape. */
export async function* readReplayFile(
  file: string,
  defaultShardId = DEFAULT_SHARD,
): AsyncGenerator<ReplayChunk> {
  for await (const { value, lineNumber } of readJsonLines(file)) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new ReplayFileError(file, lineNumber, 'a line must be a Lambda event or a stream record object');
    }
    const object = value as Record<string, unknown>;
    try {
      if (Array.isArray(object.Records)) {
        const records = (object.Records as Record<string, unknown>[]).map((r) => {
          const streamArn = typeof r?.eventSourceARN === 'string' ? r.eventSourceARN : undefined;
          return streamArn ? toLambdaRecord(r as never, { streamArn }) : (r as unknown as LambdaStreamRecord);
        });
        for (const r of records) checkRecord(r, file, lineNumber);
        yield { records, shardId: defaultShardId, streamArn: records[0]?.eventSourceARN, event: true };
        continue;
      }
      const { shardId, streamArn, ...sdk } = object as { shardId?: string; streamArn?: string } & Record<
        string,
        unknown
      >;
      const dynamodb = sdk.dynamodb as Record<string, unknown> | undefined;
      // A captured record went through JSON: its Date became an ISO string.
      if (dynamodb && typeof dynamodb.ApproximateCreationDateTime === 'string') {
        sdk.dynamodb = {
          ...dynamodb,
          ApproximateCreationDateTime: new Date(dynamodb.ApproximateCreationDateTime),
        };
      }
      const arn = streamArn ?? (typeof sdk.eventSourceARN === 'string' ? sdk.eventSourceARN : undefined);
      const record = arn
        ? toLambdaRecord(sdk as never, { streamArn: arn })
        : (sdk as unknown as LambdaStreamRecord);
      checkRecord(record, file, lineNumber);
      yield { records: [record], shardId: shardId ?? defaultShardId, streamArn: arn, event: false };
    } catch (error) {
      if (error instanceof ReplayFileError) throw error;
      throw new ReplayFileError(file, lineNumber, (error as Error).message);
    }
  }
}

function checkRecord(record: LambdaStreamRecord, file: string, line: number): void {
  const seq = record?.dynamodb?.SequenceNumber;
  if (typeof seq !== 'string' || !/^\d+$/.test(seq)) {
    throw new ReplayFileError(
      file,
      line,
      `record ${record?.eventID ?? '(no eventID)'} has no numeric dynamodb.SequenceNumber`,
    );
  }
}

/** Empty pages in a row that end a capture from AWS: about 2.5 s at the default poll interval. */
export const AWS_EMPTY_PAGES_TO_STOP = 10;

/** Options of capture: the stream to read and the JSONL file to write. */
export interface CaptureOptions {
  streams: StreamsApi;
  streamArn: string;
  /** JSONL file to write (replaced). */
  file: string;
  startingPosition?: StartingPosition;
  /** Stop once caught up (default true); false polls until `signal` aborts. */
  stopWhenCaughtUp?: boolean;
  /**
   * Empty GetRecords pages in a row that mean a shard is caught up. Default: 1 against DynamoDB
   * Local (see `isLocalEndpoint`), 10 otherwise — AWS returns empty pages
   * mid-shard, and stopping at the first would cut the capture short.
   */
  emptyPagesToStop?: number;
  signal?: AbortSignal;
  pollIntervalMs?: number;
  onRecord?: (count: number) => void;
}

// The poller checks the stream, position and interval again; here they are only passed on.
const readCaptureOptions = defineOptions<CaptureOptions>()('capture', {
  streams: { kind: 'client', required: true },
  streamArn: { kind: 'nonEmptyString', required: true },
  file: { kind: 'nonEmptyString', required: true },
  startingPosition: { kind: 'custom', expected: 'a starting position', check: () => true },
  stopWhenCaughtUp: { kind: 'boolean' },
  emptyPagesToStop: { kind: 'integer', min: 1, max: 10_000 },
  signal: { kind: 'object', methods: ['addEventListener'], expected: 'an AbortSignal' },
  pollIntervalMs: { kind: 'number', min: 0 },
  onRecord: { kind: 'function' },
});

/**
 * Writes a live stream (DynamoDB Local, or AWS through the SDK's usual endpoint resolution) to
 * JSONL: one GetRecords record per line with its shardId and streamArn, replayable by `replay`.
 */
export async function capture(options: CaptureOptions): Promise<{ records: number; file: string }> {
  readCaptureOptions(options);
  await mkdir(dirname(options.file), { recursive: true });
  // Item images: its owner's only. open's mode applies to a new file; chmod to one it replaces.
  const handle = await open(options.file, 'w', OWNER_ONLY);
  await handle.chmod(OWNER_ONLY);
  let count = 0;
  try {
    const poller = new StreamPoller({
      streams: options.streams,
      streamArn: options.streamArn,
      ...(options.startingPosition ? { startingPosition: options.startingPosition } : {}),
      ...(options.pollIntervalMs !== undefined ? { pollIntervalMs: options.pollIntervalMs } : {}),
    });
    const pollOptions: PollRunOptions = {
      stopWhenCaughtUp: options.stopWhenCaughtUp ?? true,
      emptyPagesToStop:
        options.emptyPagesToStop ?? ((await isLocalEndpoint(options.streams)) ? 1 : AWS_EMPTY_PAGES_TO_STOP),
    };
    if (options.signal) pollOptions.signal = options.signal;
    // One shard at a time into the file keeps each shard's lines in order.
    let writing = Promise.resolve();
    await poller.run(async (shard) => {
      for await (const page of shard.pages) {
        if (page.length === 0) continue;
        let text = '';
        for (const record of page)
          text += `${JSON.stringify(capturedLine(record, shard.shardId, shard.streamArn))}\n`;
        writing = writing.then(() => handle.write(text).then(() => undefined));
        await writing;
        count += page.length;
        options.onRecord?.(count);
      }
    }, pollOptions);
  } finally {
    await handle.close();
  }
  return { records: count, file: options.file };
}

/** The GetRecords shape, JSON-safe: ISO timestamp, base64 binaries (as the Lambda shape has them). */
function capturedLine(
  record: LambdaStreamRecord,
  shardId: string,
  streamArn: string,
): Record<string, unknown> {
  const { userIdentity, eventSourceARN: _arn, dynamodb, ...rest } = record;
  const created = dynamodb.ApproximateCreationDateTime;
  return {
    shardId,
    streamArn,
    ...rest,
    dynamodb: {
      ...dynamodb,
      ...(created !== undefined
        ? { ApproximateCreationDateTime: new Date(created * 1000).toISOString() }
        : {}),
    },
    ...(userIdentity
      ? { userIdentity: { PrincipalId: userIdentity.principalId, Type: userIdentity.type } }
      : {}),
  };
}
