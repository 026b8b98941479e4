import { TidewaterError } from '../../core/index.js';

/**
 * How long (ms) the emulator waits at most on anything outside the handler call, which its own
 * timeout bounds: the next page of records, a checkpoint callback, an on-failure destination's
 * send. Generous (a GetRecords page or an S3 PUT under load takes seconds, not minutes), so only a
 * source or callback that will never answer reaches it.
 */
export const DEFAULT_WAIT_BOUND_MS = 300_000;

/** What the emulator was waiting on when its bound passed. */
export type EmulatorWaitTarget =
  | 'next page of records'
  | 'checkpoint callback'
  | 'on-failure destination send';

/**
 * The emulator waited `waitBoundMs` for something that never settled: a page source that never
 * yields (a poller whose GetRecords never answers), an `onCheckpoint` that never resolves, an
 * on-failure destination whose send hangs. Lambda's own mapping would be stuck there; locally the
 * run ends with what it waited for, on which shard, and from where a restart resumes.
 */
export class EmulatorWaitTimeoutError extends TidewaterError {
  override name = 'EmulatorWaitTimeoutError';
  constructor(
    readonly waitedFor: EmulatorWaitTarget,
    readonly shardId: string,
    readonly waitedMs: number,
    /** The shard's checkpoint at the time: where a restart resumes. */
    readonly checkpoint: string | undefined,
    /** The first record the wait concerned, when one did. */
    readonly sequenceNumber?: string,
  ) {
    super(
      `${shardId}: waited ${waitedMs} ms for the ${waitedFor}${sequenceNumber === undefined ? '' : ` (from ${sequenceNumber})`} ` +
        `and it never settled (checkpoint ${checkpoint ?? 'none'}); raise the emulator's waitBoundMs if it is only slow`,
    );
  }
}

export interface WaitBound {
  ms: number;
  shardId: string;
  checkpoint: () => string | undefined;
}

/**
 * `work` within `bound.ms`, else EmulatorWaitTimeoutError. The abandoned promise keeps a handler,
 * so its late failure is observed instead of escaping as an unhandled rejection.
 */
export async function withinBound<T>(
  work: Promise<T>,
  bound: WaitBound,
  waitedFor: EmulatorWaitTarget,
  sequenceNumber?: string,
): Promise<T> {
  if (!Number.isFinite(bound.ms)) return work;
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new EmulatorWaitTimeoutError(
            waitedFor,
            bound.shardId,
            bound.ms,
            bound.checkpoint(),
            sequenceNumber,
          ),
        ),
      bound.ms,
    );
  });
  work.catch(() => undefined);
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The pages of a shard, each `next()` within the bound. On the bound the source is abandoned, not
 * returned: an async generator suspended in an await would hold `return()` until that await ends.
 */
export async function* boundedPages<T>(
  pages: AsyncIterable<T> | Iterable<T>,
  bound: WaitBound,
): AsyncGenerator<T> {
  if (!Number.isFinite(bound.ms) || !(Symbol.asyncIterator in pages)) {
    yield* pages;
    return;
  }
  const iterator = pages[Symbol.asyncIterator]();
  let done = false;
  let abandoned = false;
  try {
    for (;;) {
      const next = await withinBound(iterator.next(), bound, 'next page of records').catch(
        (error: unknown) => {
          abandoned = true;
          throw error;
        },
      );
      if (next.done) {
        done = true;
        return;
      }
      yield next.value;
    }
  } finally {
    // Stopped early by the consumer (a failed batch): the source cleans up, as for-await lets it.
    if (!done && !abandoned) await iterator.return?.();
  }
}
