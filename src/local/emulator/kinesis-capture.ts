import { mkdir, open } from 'node:fs/promises';
import { dirname } from 'node:path';
import { defineOptions } from '../../core/index.js';
import { OWNER_ONLY } from '../../core/write-file-atomic.js';
import { KINESIS_STREAM_ARN_OPTION } from '../../records/kinesis-stream-arn.js';
import { KinesisMappingEmulator } from './kinesis-emulator.js';
import { type KinesisApi, KinesisShardReader } from './kinesis-reader.js';

/** Options of captureKinesis: the stream and the JSONL file to write. */
export interface KinesisCaptureOptions {
  kinesis: KinesisApi;
  /** The Kinesis stream (`arn:aws:kinesis:<region>:<account>:stream/<name>`). */
  streamArn: string;
  /** JSONL file to write (replaced), owner-only: it holds item images. */
  file: string;
  /** Where each shard starts; default TRIM_HORIZON. */
  startingPosition?: 'TRIM_HORIZON' | 'LATEST';
  /** Stop once every shard is caught up or closed (default true); false reads until `signal` aborts. */
  stopWhenCaughtUp?: boolean;
  signal?: AbortSignal;
  /** Wait after an empty GetRecords page; default the reader's (1 s, as Lambda polls). */
  pollIntervalMs?: number;
  /** Called after each batch written, with the records written so far. */
  onRecord?: (count: number) => void;
}

// The reader checks the position and interval again; here they are only passed on.
const readOptions = defineOptions<KinesisCaptureOptions>()('captureKinesis', {
  kinesis: { kind: 'client', required: true },
  streamArn: KINESIS_STREAM_ARN_OPTION,
  file: { kind: 'nonEmptyString', required: true },
  startingPosition: { kind: 'enum', values: ['TRIM_HORIZON', 'LATEST'] },
  stopWhenCaughtUp: { kind: 'boolean', default: true },
  signal: { kind: 'object', methods: ['addEventListener'], expected: 'an AbortSignal' },
  pollIntervalMs: { kind: 'number', min: 0 },
  onRecord: { kind: 'function' },
});

/**
 * `capture` for a Kinesis data stream (a table's Kinesis streaming destination): every shard read
 * as Lambda's poller reads it (parents first, each shard in order), one Lambda Kinesis record per
 * line — the form `replayKinesis` (`tidewater replay` of a Kinesis function) reads. The shards are
 * read through the Kinesis mapping with a handler that writes, so what is captured is exactly
 * what a function would have been given.
 */
export async function captureKinesis(
  options: KinesisCaptureOptions,
): Promise<{ records: number; file: string }> {
  const o = readOptions(options);
  await mkdir(dirname(o.file), { recursive: true });
  const handle = await open(o.file, 'w', OWNER_ONLY);
  await handle.chmod(OWNER_ONLY);
  let count = 0;
  // A failed write ends the capture with its error: the mapping would retry the batch forever.
  const stop = new AbortController();
  let writeError: unknown;
  const onAbort = () => stop.abort();
  o.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const reader = new KinesisShardReader({
      kinesis: o.kinesis,
      streamArn: o.streamArn,
      ...(o.startingPosition ? { startingPosition: o.startingPosition } : {}),
      ...(o.pollIntervalMs !== undefined ? { pollIntervalMs: o.pollIntervalMs } : {}),
    });
    // One write at a time keeps each batch's lines together and each shard's batches in order.
    let writing = Promise.resolve();
    const emulator = new KinesisMappingEmulator({
      batchSize: 10_000,
      handler: async (event) => {
        let text = '';
        for (const record of event.Records) text += `${JSON.stringify(record)}\n`;
        writing = writing.then(() => handle.write(text).then(() => undefined));
        try {
          await writing;
        } catch (error) {
          writeError ??= error;
          stop.abort();
          throw error;
        }
        count += event.Records.length;
        o.onRecord?.(count);
      },
    });
    if (o.signal?.aborted) stop.abort();
    await reader
      .runEmulator(emulator, { signal: stop.signal, stopWhenCaughtUp: o.stopWhenCaughtUp })
      .catch((error: unknown) => {
        if (writeError === undefined) throw error;
      });
    if (writeError !== undefined) throw writeError;
  } finally {
    o.signal?.removeEventListener('abort', onAbort);
    await handle.close();
  }
  return { records: count, file: o.file };
}
