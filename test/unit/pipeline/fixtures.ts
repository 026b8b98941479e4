import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { PipelineLogger } from '../../../src/pipeline/index.js';
import type {
  AttributeMap,
  ClassifiedRecord,
  LambdaStreamRecord,
  RecordKind,
} from '../../../src/records/types.js';
import type {
  DeadLetterEntry,
  DeadLetterSink,
  Sink,
  SinkContext,
  SinkResult,
} from '../../../src/sinks/types.js';

export const STREAM_ARN =
  'arn:aws:dynamodb:us-east-1:123456789012:table/orders/stream/2026-01-01T00:00:00.000';

/** Sequence numbers as DynamoDB makes them: increasing digit strings, same width. */
export function seq(i: number): string {
  return (10n ** 20n + BigInt(i) * 100n).toString();
}

export interface RecordSpec {
  kind?: RecordKind;
  pk?: string;
  ttl?: unknown;
  created?: number;
}

export function streamRecord(i: number, spec: RecordSpec = {}): LambdaStreamRecord {
  const kind = spec.kind ?? 'insert';
  const pk = spec.pk ?? `item-${i}`;
  const image: AttributeMap = { pk: { S: pk }, n: { N: String(i) } };
  if (spec.ttl !== undefined) Object.assign(image, { expiresAt: spec.ttl });
  const remove = kind === 'user-delete' || kind === 'ttl-delete';
  return {
    eventID: `event-${i}`,
    eventName: kind === 'insert' ? 'INSERT' : kind === 'modify' ? 'MODIFY' : 'REMOVE',
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: 'us-east-1',
    eventSourceARN: STREAM_ARN,
    ...(kind === 'ttl-delete'
      ? { userIdentity: { type: 'Service', principalId: 'dynamodb.amazonaws.com' } }
      : {}),
    dynamodb: {
      ApproximateCreationDateTime: spec.created ?? 1_800_000_000,
      Keys: { pk: { S: pk } },
      ...(remove ? { OldImage: image } : { NewImage: image }),
      ...(kind === 'modify' ? { OldImage: image } : {}),
      SequenceNumber: seq(i),
      SizeBytes: 40,
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    },
  };
}

export function batch(count: number, spec: (i: number) => RecordSpec = () => ({})) {
  return { Records: Array.from({ length: count }, (_, i) => streamRecord(i, spec(i))) };
}

/** A sink that records every call and fails records by rule: `failWhen(sequenceNumber, attempt)`. */
export class RecordingSink implements Sink {
  readonly calls: string[][] = [];
  readonly written: string[] = [];
  readonly #attempts = new Map<string, number>();
  constructor(
    readonly name: string,
    readonly failWhen: (sequenceNumber: string, attempt: number) => boolean | 'throw' = () => false,
    readonly onWrite?: (records: readonly ClassifiedRecord[], context: SinkContext) => Promise<void> | void,
  ) {}
  async write(records: readonly ClassifiedRecord[], context: SinkContext): Promise<SinkResult> {
    this.calls.push(records.map((r) => r.sequenceNumber));
    await this.onWrite?.(records, context);
    const failed = [];
    const ok: string[] = [];
    for (const r of records) {
      const attempt = (this.#attempts.get(r.sequenceNumber) ?? 0) + 1;
      this.#attempts.set(r.sequenceNumber, attempt);
      const verdict = this.failWhen(r.sequenceNumber, attempt);
      // A throw means "nothing of this call was acknowledged", so nothing counts as written.
      if (verdict === 'throw') throw new Error(`sink ${this.name} down at ${r.sequenceNumber}`);
      if (verdict)
        failed.push({ sequenceNumber: r.sequenceNumber, error: new Error(`rejected ${r.sequenceNumber}`) });
      else ok.push(r.sequenceNumber);
    }
    this.written.push(...ok);
    return { failed };
  }
}

export class RecordingDeadLetter implements DeadLetterSink {
  readonly name = 'dlq';
  readonly entries: DeadLetterEntry[] = [];
  constructor(readonly broken = false) {}
  async send(entries: readonly DeadLetterEntry[]): Promise<void> {
    if (this.broken) throw new Error('dead-letter queue unavailable');
    this.entries.push(...entries);
  }
}

/** A pino logger writing JSON lines into an array. */
export function captureLogger(): { logger: PipelineLogger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      lines.push(JSON.parse(String(chunk)));
      callback();
    },
  });
  return { logger: pino({ level: 'debug' }, stream) as unknown as PipelineLogger, lines };
}

export function silentLogger(): PipelineLogger {
  return pino({ level: 'silent' }) as unknown as PipelineLogger;
}

/** Base options every test uses: quiet, no EMF on stdout, no backoff waits. */
export const quiet = {
  logger: silentLogger(),
  metrics: false as const,
  retry: { attempts: 3, baseDelayMs: 0, maxDelayMs: 0 },
};

/** A Lambda context whose clock advances `stepMs` each time it is read. */
export function fakeContext(remainingMs: number, stepMs = 0) {
  let left = remainingMs;
  return {
    awsRequestId: 'req-1',
    getRemainingTimeInMillis: () => {
      const value = left;
      left -= stepMs;
      return value;
    },
  };
}
