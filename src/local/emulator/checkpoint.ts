import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '../../core/write-file-atomic.js';
import { CheckpointError } from './errors.js';

/** Where one shard was read to, and whether it was read to its end. */
export interface ShardCheckpoint {
  /** Last sequence number handled; reading resumes AFTER it. */
  sequenceNumber?: string;
  /** The shard was closed and read to its end; its children may start. */
  finished?: boolean;
  /**
   * The shard was finished without being read, because it ended before the starting position:
   * its children take the starting position instead of starting at their beginning.
   */
  skipped?: boolean;
}

/** The emulator's checkpoint file: where each shard of a stream was read to. */
export interface CheckpointData {
  version: 1;
  streamArn: string;
  shards: Record<string, ShardCheckpoint>;
}

/**
 * Per-shard positions of one stream, kept in memory and (when a path is given) in a JSON file
 * written atomically (temp file + rename), so a crash never leaves half a checkpoint.
 */
export class CheckpointStore {
  private data: CheckpointData;
  private writing: Promise<void> = Promise.resolve();

  private constructor(
    readonly file: string | undefined,
    data: CheckpointData,
  ) {
    this.data = data;
  }

  static async open(streamArn: string, file?: string): Promise<CheckpointStore> {
    if (!file) return new CheckpointStore(undefined, { version: 1, streamArn, shards: {} });
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT')
        return new CheckpointStore(file, { version: 1, streamArn, shards: {} });
      throw new CheckpointError(file, `cannot read: ${(error as Error).message}`);
    }
    let data: CheckpointData;
    try {
      data = JSON.parse(text) as CheckpointData;
    } catch {
      throw new CheckpointError(file, 'is not JSON');
    }
    if (data?.version !== 1 || typeof data.shards !== 'object' || data.shards === null) {
      throw new CheckpointError(file, 'is not a tidewater checkpoint (version 1)');
    }
    if (data.streamArn !== streamArn) {
      throw new CheckpointError(
        file,
        `belongs to ${data.streamArn}, not ${streamArn}; remove it to start over`,
      );
    }
    return new CheckpointStore(file, data);
  }

  get(shardId: string): ShardCheckpoint | undefined {
    return this.data.shards[shardId];
  }

  snapshot(): CheckpointData {
    return structuredClone(this.data);
  }

  async commit(shardId: string, sequenceNumber: string): Promise<void> {
    const current = this.data.shards[shardId];
    if (current?.sequenceNumber !== undefined && BigInt(current.sequenceNumber) >= BigInt(sequenceNumber))
      return;
    this.data.shards[shardId] = { ...current, sequenceNumber };
    await this.persist();
  }

  async finish(shardId: string, options: { skipped?: boolean } = {}): Promise<void> {
    this.data.shards[shardId] = {
      ...this.data.shards[shardId],
      finished: true,
      ...(options.skipped ? { skipped: true } : {}),
    };
    await this.persist();
  }

  private persist(): Promise<void> {
    const file = this.file;
    if (!file) return Promise.resolve();
    // Writes are chained so an older snapshot never overwrites a newer one.
    this.writing = this.writing.then(async () => {
      await writeFileAtomic(file, `${JSON.stringify(this.data, null, 2)}\n`);
    });
    return this.writing;
  }
}
