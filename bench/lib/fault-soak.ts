/**
 * The fault soak: TTL deletes with hard values (38-digit numbers, exact decimals, the range's
 * ends, binary, sets, unicode, nesting to DynamoDB's deepest) and poison records, through the
 * event source mapping emulator into an archive pipeline (S3ArchiveSink + S3DeadLetterSink) on a
 * local S3 server that fails requests, applies PUTs it then answers with an error ("late" PUTs),
 * and goes down for the archive prefix for a while; the function throws and times out before and
 * after processing. Then the archive and the dead letters are read back and compared with what
 * was sent. Used by test/integration/soak/fault-soak.test.ts (small) and bench/suites/fault-soak.ts.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { tenantFromPartitionKey } from '../../src/archive/partition.js';
import { compactArchive, decodeArchiveObject, eraseTenant, readArchiveRows } from '../../src/archive.js';
import { EventSourceMappingEmulator } from '../../src/local/emulator/emulator.js';
import { type S3ServerMiddleware, startS3Server } from '../../src/local/servers/s3-server.js';
import { createPipeline, createStreamHandler, type PipelineLogger, route } from '../../src/pipeline/index.js';
import type { AttributeMap, AttributeValue, LambdaStreamRecord } from '../../src/records/types.js';
import { S3ArchiveSink, S3DeadLetterSink } from '../../src/s3.js';
import { DeadLetterSendError } from '../../src/sinks/errors.js';
import type { DeadLetterEntry, DeadLetterSink } from '../../src/sinks/types.js';
import { watchEscapes } from './escapes.js';
import { createRandom, type Random } from './random.js';
import { passOnCountingErrors, soakS3Client } from './soak-s3.js';

export interface SoakFaults {
  /** Share of S3 requests answered 500 or 503 without being applied. */
  s3Errors: number;
  /** Share of DELETEs answered 500 without being applied, on top of `s3Errors`. */
  deleteErrors?: number;
  /** Share of PUTs applied and then answered 500: the client retries or gives up on a write that landed. */
  latePuts: number;
  /** Archive PUTs (counted from the run's first) that are late whatever the share says. */
  latePutsAt?: readonly number[];
  /** Archive PUTs (counted from the run's first) from which the archive prefix answers 503 SlowDown, and how many. */
  archiveOutage?: { fromPut: number; puts: number };
  /**
   * From archive PUT `fromPut` (counted from the run's first), the archive prefix answers 503
   * SlowDown for `ms` of wall time: an outage as S3 has them, in seconds rather than requests.
   */
  timedArchiveOutage?: { fromPut: number; ms: number };
  /** Shares of invocations that throw, or hang past the timeout, before or after processing the batch. */
  throwBefore: number;
  throwAfter: number;
  timeoutBefore: number;
  timeoutAfter: number;
  /** Faults for given invocations (0 is the first), on top of the shares: a small run meets each kind. */
  schedule?: Readonly<Record<number, FunctionFault>>;
}

export type FunctionFault = 'throwBefore' | 'throwAfter' | 'timeoutBefore' | 'timeoutAfter';

export interface SoakOptions {
  seed: number;
  /** Valid TTL deletes, spread over the shards. */
  records: number;
  shards: number;
  faults: SoakFaults;
  /** Function timeout in seconds: every injected timeout costs this much wall time. */
  timeoutSeconds: number;
  batchSize?: number;
  /** The S3 client's attempts per request (SinkRetryStrategy, as the sinks build it); default 4. */
  s3MaxAttempts?: number;
  /**
   * How the function runs the pipeline: `createStreamHandler` (middy, as deployed; its early
   * timeout ends the invocation while the pipeline may still run) or `pipeline.process`.
   * Default createStreamHandler.
   */
  via?: 'createStreamHandler' | 'pipeline';
  /** Tenants the records spread over (by partition key); default 7. */
  tenants?: number;
  /** Archive objects per tenant (`partitionBy`), at most this many tenants per batch; default unpartitioned. */
  maxPartitionsPerBatch?: number;
  /**
   * After the first pass: the shards redelivered again from their start (a restart from an old
   * checkpoint), under the same faults, while compactArchive and eraseTenant (of tenant 0, whose
   * records the redelivery no longer carries: it was deleted) run on the same archive. Needs
   * maxPartitionsPerBatch.
   */
  compactAndEraseDuringRedelivery?: boolean;
  log?: (message: string) => void;
}

/** Kinds of poison: each breaks one rule DynamoDB keeps, as a corrupted event would. */
export const POISON_KINDS = [
  'N is not a number',
  'two type keys',
  'unknown type',
  'SS is a string',
  'creation time in milliseconds',
  'no creation time',
  'nested 1,000 levels',
  'nested 33 levels',
  'empty set',
  'a set member twice',
  '39 significant digits',
  'above 9.99E+125',
] as const;

export interface SoakResult {
  seed: number;
  valid: number;
  poison: number;
  shards: number;
  invocations: number;
  seconds: number;
  injected: {
    s3Errors: number;
    latePuts: number;
    outage: number;
    throwBefore: number;
    throwAfter: number;
    timeoutBefore: number;
    timeoutAfter: number;
  };
  /** Invocations by the emulator's verdict (success, partial-failure, function-error, timeout). */
  outcomes: Record<string, number>;
  /** Valid records neither archived nor dead-lettered. */
  lost: number;
  /** Archived rows whose record differs from the one sent (keys, images, identity, time). */
  mismatched: number;
  /** Records readArchive yielded more than once. */
  duplicatesAsRead: number;
  /** Rows stored beyond one per record (redeliveries cut elsewhere): readArchive removes them. */
  storedDuplicateRows: number;
  poisonArchived: number;
  poisonDeadLettered: number;
  /** Valid records dead-lettered (their writes kept failing): not lost, waiting for a replay. */
  validDeadLettered: number;
  /**
   * Records dead-lettered by an invocation whose own response reported an earlier record failed:
   * Lambda delivers them again, so the entry is stored for a record that is not given up (the
   * pipeline holds such a record back). Counted whether or not an archive row joins it later.
   */
  deadLetteredPastFailure: number;
  /** Dead letters of valid records by `reason: error name`. */
  validDeadLetterCauses: Record<string, number>;
  /**
   * Dead letters whose record is also archived, by the first cause that explains one: the
   * response of an invocation given the record was lost (the function failed or timed out after
   * writing, so Lambda redelivered the batch: one delivery archived it, another dead-lettered
   * it), a delivery reported a record before it failed (Lambda redelivers from the lowest failed
   * record: one delivery archived it, another dead-lettered it), a send holding it failed (a PUT of the entry S3 applied though it answered with an
   * error, or an entry whose delete failed), the archive PUT landed after the client gave up on
   * it; else unexplained.
   */
  strayDeadLetters: {
    total: number;
    responseLost: number;
    /**
     * Delivered in an invocation that reported an earlier record failed, so delivered again: it
     * was archived in one delivery and its writes failed to the end in another.
     */
    afterFailure: number;
    failedSend: number;
    latePut: number;
    unexplained: number;
  };
  /** For each unexplained stray: the record, and the invocations that stored its entry with their outcomes. */
  unexplainedStrays: string[];
  /** unhandledRejection / uncaughtException events in this process during the run. */
  processErrors: string[];
  /** Shard runs that ended with an error (a stall, a wait that never ended) instead of a result. */
  stalls: string[];
  /** 5xx answers of the local S3 server the soak did not inject (requests S3 would have accepted): method, status, error. */
  serverErrors: string[];
  /** With compactAndEraseDuringRedelivery: what ran beside the redelivery, and the erased tenant's rows left. */
  maintenance?: {
    compactedHours: number;
    erasedRows: number;
    /** Runs of compaction / erase that failed under the faults and were run again after. */
    failedRuns: string[];
    /** Rows of the erased tenant readArchiveRows still yields. */
    erasedTenantRowsLeft: number;
  };
}

const TABLE = 'soak-orders';
const BUCKET = 'soak-archive';
const ARCHIVE_PREFIX = 'archive';
const DEAD_LETTER_PREFIX = 'dead-letter';
/** 2026-01-15T10:00:00Z: records are a second apart from here, over several hour partitions. */
const START = 1_768_471_200;
const TTL_ATTRIBUTE = 'expiresAt';
const STREAM_ARN = `arn:aws:dynamodb:us-east-1:123456789012:table/${TABLE}/stream/2026-01-01T00:00:00.000`;

const quietLogger: PipelineLogger = {
  child: () => quietLogger,
  debug() {},
  info() {},
  warn() {},
  error() {},
};

function s3Error(code: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>injected by the soak</Message><RequestId>soak</RequestId></Error>`;
}

// ---- records ---------------------------------------------------------------------------------

const STRINGS = [
  '',
  'plain',
  'ünïcødé',
  '🦑 squid',
  'line\nbreak',
  'tab\tand "quotes"',
  '\u2028\u2029',
  'ﾟ･✿ヾ',
];
const EXACT_NUMBERS = [
  '0',
  '-1',
  '1.50',
  '0.1',
  '1E-130',
  '-1E-130',
  '9.9999999999999999999999999999999999999E+125',
  '-9.9999999999999999999999999999999999999E+125',
  '9007199254740993',
  '100000000000000000000',
  '0.00000000000000000000000000000000000001',
];

function number(random: Random): AttributeValue {
  const pick = random.int(0, 3);
  if (pick === 0) return { N: random.pick(EXACT_NUMBERS) };
  if (pick === 1) return { N: `${random.next() < 0.5 ? '-' : ''}${random.digits(random.int(1, 38))}` };
  if (pick === 2) return { N: `${random.digits(random.int(1, 19))}.${random.digits(random.int(1, 19))}` };
  return { N: String(random.int(-1_000_000, 1_000_000)) };
}

function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64');
}

/** Unique members, as DynamoDB keeps them. */
function uniqueSet(make: () => string, size: number, key: (v: string) => string): string[] {
  const seen = new Map<string, string>();
  for (let i = 0; i < size * 3 && seen.size < size; i++) {
    const v = make();
    seen.set(key(v), v);
  }
  return [...seen.values()];
}

function nested(random: Random, levels: number): AttributeValue {
  let value: AttributeValue = { S: random.text(4) };
  for (let i = 0; i < levels; i++)
    value = random.next() < 0.5 ? { L: [value, { NULL: true }] } : { M: { n: value } };
  return value;
}

function image(random: Random, pk: string, sk: string, created: number, i: number): AttributeMap {
  const out: AttributeMap = {
    pk: { S: pk },
    sk: { N: sk },
    [TTL_ATTRIBUTE]: { N: String(created - random.int(1, 3_600)) },
    title: { S: `${random.pick(STRINGS)} ${random.text(random.int(0, 40))}` },
    amount: number(random),
    ledger: { N: random.digits(38) },
    exact: { N: random.pick(EXACT_NUMBERS) },
    active: { BOOL: random.next() < 0.5 },
    gone: { NULL: true },
    blob: { B: base64(random.bytes(random.int(0, 200))) },
    tags: {
      SS: uniqueSet(
        () => random.pick(STRINGS) + random.text(3),
        random.int(1, 5),
        (v) => v,
      ),
    },
    scores: {
      NS: uniqueSet(
        () => (number(random) as { N: string }).N,
        random.int(1, 4),
        (v) => String(Number(v)),
      ),
    },
    blobs: {
      BS: uniqueSet(
        () => base64(random.bytes(random.int(1, 80))),
        random.int(1, 3),
        (v) => v,
      ),
    },
    address: {
      M: {
        street: { S: random.text(20) },
        lines: { L: [{ S: random.text(8) }, { N: String(i) }, { M: { zip: { S: random.digits(5) } } }] },
      },
    },
  };
  // Now and then the deepest nesting DynamoDB stores (31 levels around a scalar), or a large item.
  if (i % 97 === 0) out.deep = nested(random, 31);
  if (i % 251 === 0) out.large = { S: random.text(60_000) };
  return out;
}

function ttlDelete(
  shard: number,
  i: number,
  sequence: bigint,
  created: number,
  oldImage: AttributeMap,
): LambdaStreamRecord {
  const keys: AttributeMap = { pk: oldImage.pk as AttributeValue, sk: oldImage.sk as AttributeValue };
  return {
    eventID: `s${shard}-${i.toString(16).padStart(8, '0')}-${sequence.toString(36)}`,
    eventName: 'REMOVE',
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: 'us-east-1',
    eventSourceARN: STREAM_ARN,
    userIdentity: { type: 'Service', principalId: 'dynamodb.amazonaws.com' },
    dynamodb: {
      ApproximateCreationDateTime: created,
      Keys: keys,
      OldImage: oldImage,
      SequenceNumber: sequence.toString().padStart(21, '0'),
      SizeBytes: Buffer.byteLength(JSON.stringify(oldImage)),
      StreamViewType: 'OLD_IMAGE',
    },
  };
}

function poisoned(record: LambdaStreamRecord, kind: (typeof POISON_KINDS)[number]): LambdaStreamRecord {
  const d = record.dynamodb;
  const old = d.OldImage as Record<string, unknown>;
  switch (kind) {
    case 'N is not a number':
      old.amount = { N: '12abc' };
      break;
    case 'two type keys':
      old.title = { S: 'a', N: '1' };
      break;
    case 'unknown type':
      old.title = { X: 'a' };
      break;
    case 'SS is a string':
      old.tags = { SS: 'a' };
      break;
    case 'creation time in milliseconds':
      d.ApproximateCreationDateTime = (d.ApproximateCreationDateTime as number) * 1000;
      break;
    case 'no creation time':
      delete d.ApproximateCreationDateTime;
      break;
    case 'nested 1,000 levels': {
      let deep: unknown = { S: 'x' };
      for (let i = 0; i < 1_000; i++) deep = { M: { n: deep } };
      old.deep = deep;
      break;
    }
    case 'nested 33 levels': {
      let deep: unknown = { S: 'x' };
      for (let i = 0; i < 32; i++) deep = { L: [deep] };
      old.deep = deep;
      break;
    }
    case 'empty set':
      old.tags = { SS: [] };
      break;
    case 'a set member twice':
      old.scores = { NS: ['1.5', '1.50'] };
      break;
    case '39 significant digits':
      old.ledger = { N: `1${'2'.repeat(38)}` };
      break;
    case 'above 9.99E+125':
      old.amount = { N: '1E+126' };
      break;
  }
  return record;
}

interface Shard {
  shardId: string;
  records: LambdaStreamRecord[];
}

/**
 * The shards' records. Both shards use the same sequence numbers (AWS documents them unique only
 * within a shard) and, under Lambda, the same archive shard segment: only eventIDs tell them apart.
 */
export function buildShards(
  random: Random,
  valid: number,
  shards: number,
  tenants = 7,
): { shards: Shard[]; poison: Set<string> } {
  const out: Shard[] = [];
  const poison = new Set<string>();
  const perShard = Math.ceil(valid / shards);
  let made = 0;
  for (let s = 0; s < shards; s++) {
    const records: LambdaStreamRecord[] = [];
    const count = Math.min(perShard, valid - made);
    // Poison at spread positions of every shard: each kind once over the run.
    const kinds = POISON_KINDS.filter((_, k) => k % shards === s);
    const poisonAt = new Map(kinds.map((kind, k) => [Math.floor(((k + 0.5) * count) / kinds.length), kind]));
    let sequence = 100_000_000_000_000_000_001n;
    for (let i = 0; i < count; i++) {
      const created = START + Math.floor(((made + i) * 4 * 3_600) / valid);
      const n = made + i;
      records.push(
        ttlDelete(
          s,
          n,
          sequence,
          created,
          image(random, `tenant#${n % tenants}/order#${n}`, random.digits(random.int(1, 38)), created, n),
        ),
      );
      sequence += BigInt(random.int(1, 500));
      const kind = poisonAt.get(i);
      if (kind !== undefined) {
        const bad = poisoned(
          ttlDelete(s, 1_000_000 + n, sequence, created, image(random, `poison#${n}`, '1', created, n)),
          kind,
        );
        poison.add(`${bad.dynamodb.SequenceNumber}/${bad.eventID}`);
        records.push(bad);
        sequence += 1n;
      }
    }
    made += count;
    out.push({ shardId: `shardId-0000000000000000000${s}-soak`, records });
  }
  return { shards: out, poison };
}

// ---- the run ---------------------------------------------------------------------------------

/** The tenant of a soak record: its partition key before the `/`. */
const tenantOf = tenantFromPartitionKey({ separator: '/' });
const ERASED_TENANT = 'tenant#0';

function identity(sequenceNumber: string | undefined, eventID: string | undefined): string {
  return `${sequenceNumber}/${eventID}`;
}

/** The sequence number an identity starts with. */
function sequenceOf(id: string): bigint {
  return BigInt(id.slice(0, id.indexOf('/')));
}

export function noneInjected(): SoakResult['injected'] {
  return {
    s3Errors: 0,
    latePuts: 0,
    outage: 0,
    throwBefore: 0,
    throwAfter: 0,
    timeoutBefore: 0,
    timeoutAfter: 0,
  };
}

export async function runFaultSoak(options: SoakOptions): Promise<SoakResult> {
  const log = options.log ?? (() => undefined);
  const random = createRandom(options.seed);
  const faults = options.faults;
  const injected = noneInjected();
  const lateKeys = new Set<string>();
  let faulting = true;
  let archivePuts = 0;
  /** performance.now() of the timed outage's first refused PUT. */
  let outageStarted: number | undefined;
  const serverErrors: string[] = [];
  const faultRandom = createRandom(options.seed ^ 0x5eed);
  // Whatever the server answers 5xx without the soak asking for it is a request S3 would accept.
  const passOn = (ctx: Parameters<S3ServerMiddleware>[0], next: () => Promise<void>) =>
    passOnCountingErrors(ctx, next, serverErrors);
  const middleware: S3ServerMiddleware = async (ctx, next) => {
    if (!faulting || (ctx.method !== 'PUT' && ctx.method !== 'DELETE')) return passOn(ctx, next);
    const path = decodeURIComponent(ctx.path);
    const archive = ctx.method === 'PUT' && path.startsWith(`/${BUCKET}/${ARCHIVE_PREFIX}/`);
    const put = archive ? archivePuts++ : -1;
    const outage = faults.archiveOutage;
    const fail = (code: string, status: number) => {
      ctx.status = status;
      ctx.set('Content-Type', 'application/xml');
      ctx.body = s3Error(code);
    };
    if (outage !== undefined && put >= outage.fromPut && put < outage.fromPut + outage.puts) {
      injected.outage++;
      return fail('SlowDown', 503);
    }
    const timed = faults.timedArchiveOutage;
    if (timed !== undefined && put >= timed.fromPut) {
      outageStarted ??= performance.now();
      if (performance.now() - outageStarted < timed.ms) {
        injected.outage++;
        return fail('SlowDown', 503);
      }
    }
    if (faultRandom.next() < faults.s3Errors) {
      injected.s3Errors++;
      return faultRandom.next() < 0.5 ? fail('InternalError', 500) : fail('ServiceUnavailable', 503);
    }
    if (ctx.method === 'DELETE' && faultRandom.next() < (faults.deleteErrors ?? 0)) {
      injected.s3Errors++;
      return fail('InternalError', 500);
    }
    if (ctx.method === 'PUT' && (faults.latePutsAt?.includes(put) || faultRandom.next() < faults.latePuts)) {
      await passOn(ctx, next);
      if (ctx.status !== 200) return;
      injected.latePuts++;
      lateKeys.add(path.slice(BUCKET.length + 2));
      return fail('InternalError', 500);
    }
    return passOn(ctx, next);
  };
  // Anything that escapes the code under test while the soak runs: counted, reported, never ignored.
  const escapes = watchEscapes();
  const processErrors = escapes.errors;
  const tenants = options.tenants ?? 7;
  const partitioned = options.maxPartitionsPerBatch !== undefined;
  if (options.compactAndEraseDuringRedelivery && !partitioned)
    throw new Error(
      'compactAndEraseDuringRedelivery needs maxPartitionsPerBatch (eraseTenant reads tenants)',
    );

  const { shards, poison } = buildShards(random, options.records, options.shards, tenants);
  const sent = new Map<string, LambdaStreamRecord>();
  for (const shard of shards)
    for (const r of shard.records) sent.set(identity(r.dynamodb.SequenceNumber, r.eventID), r);

  const server = await startS3Server({ buckets: [BUCKET], middleware: [middleware] });
  const client = soakS3Client(server.endpoint, options.s3MaxAttempts ?? 4);
  const started = performance.now();
  try {
    // Which invocation stored which dead letters, which sends failed, whose response was lost.
    const invocation = new AsyncLocalStorage<number>();
    const storedBy = new Map<string, Set<number>>();
    const failedSends = new Set<string>();
    const lostResponses = new Set<number>();
    /** Each partial-failure response's lowest failed sequence number: Lambda redelivers from there. */
    const failedAt = new Map<number, bigint>();
    const requestOf = new Map<string, number>();
    const outcomes = new Map<number, string>();
    const deliveredIn = new Map<string, number[]>();
    // Invocations that ran the pipeline: only their lost responses can have left writes behind.
    const processed = new Set<number>();
    const s3DeadLetter = new S3DeadLetterSink({ client, bucket: BUCKET, prefix: DEAD_LETTER_PREFIX });
    const stored = (entries: readonly DeadLetterEntry[]) => {
      const n = invocation.getStore() as number;
      for (const e of entries) {
        const id = identity(e.sequenceNumber, e.eventID);
        if (!storedBy.has(id)) storedBy.set(id, new Set());
        storedBy.get(id)?.add(n);
      }
    };
    const deadLetter: DeadLetterSink = {
      name: s3DeadLetter.name,
      async send(entries, context) {
        try {
          await s3DeadLetter.send(entries, context);
          stored(entries);
        } catch (error) {
          const unsent = new Set(error instanceof DeadLetterSendError ? error.sequenceNumbers : []);
          stored(entries.filter((e) => !unsent.has(e.sequenceNumber ?? '')));
          for (const e of entries)
            if (unsent.has(e.sequenceNumber ?? '')) failedSends.add(identity(e.sequenceNumber, e.eventID));
          throw error;
        }
      },
    };
    const pipelineConfig = {
      routes: [
        route({
          when: 'ttl-delete',
          to: new S3ArchiveSink({
            client,
            bucket: BUCKET,
            prefix: ARCHIVE_PREFIX,
            ttlAttribute: TTL_ATTRIBUTE,
            ...(partitioned
              ? { partitionBy: tenantOf, maxPartitionsPerBatch: options.maxPartitionsPerBatch }
              : {}),
          }),
        }),
      ],
      deadLetter,
      retry: { attempts: 3, baseDelayMs: 20, maxDelayMs: 200 },
      deadlineMarginMs: 300,
      logger: quietLogger,
      metrics: false,
    } as const;
    const pipeline = createPipeline(pipelineConfig);
    const streamHandler = createStreamHandler(pipelineConfig);
    const processBatch =
      (options.via ?? 'createStreamHandler') === 'pipeline'
        ? pipeline.process
        : (event: Parameters<typeof pipeline.process>[0], context: Parameters<typeof streamHandler>[1]) =>
            streamHandler(event as never, context);
    const functionRandom = createRandom(options.seed ^ 0xfa17);
    const pickFault = (n: number): FunctionFault | undefined => {
      const scheduled = faults.schedule?.[n];
      if (scheduled !== undefined) return scheduled;
      let roll = functionRandom.next();
      for (const fault of ['throwBefore', 'throwAfter', 'timeoutBefore', 'timeoutAfter'] as const) {
        if (roll < faults[fault]) return fault;
        roll -= faults[fault];
      }
      return undefined;
    };
    let invocations = 0;
    const timeoutMs = options.timeoutSeconds * 1000;
    const emulator = new EventSourceMappingEmulator({
      functionName: 'soak-archive',
      batchSize: options.batchSize ?? 100,
      reportBatchItemFailures: true,
      timeoutSeconds: options.timeoutSeconds,
      timedOutSettleMs: timeoutMs,
      stallAfterAttempts: 200,
      keepLog: false,
      // A timeout or failure the soak did not inject (a send outlasting the function) loses a response too.
      onEvent: (event) => {
        if (event.type !== 'response') return;
        const n = requestOf.get(event.requestId);
        if (n === undefined) return;
        outcomes.set(
          n,
          `${event.outcome}${event.failedSequenceNumber ? ` at ${event.failedSequenceNumber}` : ''}`,
        );
        if (event.outcome === 'timeout' || event.outcome === 'function-error') lostResponses.add(n);
        if (event.failedSequenceNumber) failedAt.set(n, BigInt(event.failedSequenceNumber));
      },
      handler: (event, context) => {
        const n = invocations++;
        requestOf.set(context.awsRequestId, n);
        for (const r of event.Records) {
          const id = identity(r.dynamodb.SequenceNumber, r.eventID);
          deliveredIn.set(id, [...(deliveredIn.get(id) ?? []), n]);
        }
        return invocation.run(n, async () => {
          const fault = pickFault(n);
          if (fault !== undefined) injected[fault]++;
          if (fault === 'throwBefore') throw new Error('injected: the function failed before processing');
          if (fault === 'timeoutBefore') {
            await sleep(timeoutMs + 200);
            return undefined;
          }
          processed.add(n);
          const response = await processBatch(event, context as never);
          if (fault === 'throwAfter') {
            lostResponses.add(n);
            throw new Error('injected: the function failed after processing');
          }
          if (fault === 'timeoutAfter') {
            lostResponses.add(n);
            await sleep(context.getRemainingTimeInMillis() + 200);
          }
          return response;
        });
      },
    });
    log(`${options.records} TTL deletes and ${poison.size} poison records on ${shards.length} shards`);
    const stalls: string[] = [];
    const runShards = (keep: (record: LambdaStreamRecord) => boolean) =>
      Promise.all(
        shards.map((shard) =>
          emulator
            .runShard({
              shardId: shard.shardId,
              streamArn: STREAM_ARN,
              pages: pagesOf(shard.records.filter(keep), 250),
            })
            .catch((error: unknown) => {
              stalls.push(`${shard.shardId}: ${(error as Error).name}: ${(error as Error).message}`);
            }),
        ),
      );
    await runShards(() => true);
    let maintenance: Omit<NonNullable<SoakResult['maintenance']>, 'erasedTenantRowsLeft'> | undefined;
    const redelivered = new Set<number>();
    if (options.compactAndEraseDuringRedelivery) {
      const firstRedelivery = invocations;
      log('redelivering every shard from its start while compactArchive and eraseTenant run');
      maintenance = await maintainDuringRedelivery(
        client,
        log,
        () => runShards((record) => tenantOfRecord(record) !== ERASED_TENANT),
        () => {
          faulting = false;
        },
      );
      for (let n = firstRedelivery; n < invocations; n++) redelivered.add(n);
    }
    const seconds = (performance.now() - started) / 1000;
    log(`processed in ${seconds.toFixed(1)} s over ${invocations} invocations; reading back`);
    faulting = false;

    // ---- read back ----
    const asRead = new Map<string, number>();
    const erased = new Set<string>();
    if (options.compactAndEraseDuringRedelivery)
      for (const [id, record] of sent) if (tenantOfRecord(record) === ERASED_TENANT) erased.add(id);
    let erasedTenantRowsLeft = 0;
    let mismatched = 0;
    for await (const row of readArchiveRows(archiveRange(client))) {
      const id = identity(row.sequenceNumber, row.eventID);
      asRead.set(id, (asRead.get(id) ?? 0) + 1);
      if (erased.has(id)) erasedTenantRowsLeft++;
      const original = sent.get(id);
      if (
        original === undefined ||
        JSON.stringify(row.keys) !== JSON.stringify(original.dynamodb.Keys) ||
        JSON.stringify(row.oldImage) !== JSON.stringify(original.dynamodb.OldImage) ||
        row.approximateCreationDateTime !== original.dynamodb.ApproximateCreationDateTime ||
        row.kind !== 'ttl-delete'
      ) {
        mismatched++;
      }
    }
    const objectsOf = new Map<string, string[]>();
    let storedRows = 0;
    for (const key of await listKeys(client, `${ARCHIVE_PREFIX}/`)) {
      // Compaction's manifests live under the prefix too: they hold no rows.
      if (key.includes('/_compaction/')) continue;
      const rows = decodeArchiveObject(await getBytes(client, key), key);
      storedRows += rows.length;
      for (const row of rows) {
        const id = identity(row.sequenceNumber, row.eventID);
        objectsOf.set(id, [...(objectsOf.get(id) ?? []), key]);
      }
    }
    const deadLettered = new Map<string, string>();
    const validDeadLetterCauses: Record<string, number> = {};
    for (const key of await listKeys(client, `${DEAD_LETTER_PREFIX}/`)) {
      const entry = JSON.parse(new TextDecoder().decode(await getBytes(client, key))) as DeadLetterEntry;
      const id = identity(entry.sequenceNumber, entry.eventID);
      deadLettered.set(id, entry.reason);
      if (poison.has(id)) continue;
      const cause = `${entry.reason}: ${entry.error.name}`;
      validDeadLetterCauses[cause] = (validDeadLetterCauses[cause] ?? 0) + 1;
    }

    let lost = 0;
    let validDeadLettered = 0;
    for (const id of sent.keys()) {
      if (poison.has(id) || erased.has(id)) continue;
      if (deadLettered.has(id)) validDeadLettered++;
      if (!asRead.has(id) && !deadLettered.has(id)) lost++;
    }
    // Stored by an invocation that answered Lambda with an earlier record failed: never exact.
    let deadLetteredPastFailure = 0;
    for (const [id, by] of storedBy)
      if (
        [...by].some((n) => {
          const failed = failedAt.get(n);
          return failed !== undefined && failed <= sequenceOf(id);
        })
      )
        deadLetteredPastFailure++;
    const stray = {
      total: 0,
      responseLost: 0,
      redelivery: 0,
      afterFailure: 0,
      failedSend: 0,
      latePut: 0,
      unexplained: 0,
    };
    const unexplainedStrays: string[] = [];
    for (const id of deadLettered.keys()) {
      if (!asRead.has(id)) continue;
      stray.total++;
      // Lambda redelivered a batch holding the record: it was archived and dead-lettered in two deliveries.
      if ((deliveredIn.get(id) ?? []).some((n) => processed.has(n) && lostResponses.has(n)))
        stray.responseLost++;
      // Delivered again by the restart from the shard's start: archived once, dead-lettered the next time.
      else if ((deliveredIn.get(id) ?? []).some((n) => redelivered.has(n))) stray.redelivery++;
      // Dead-lettered in a delivery that reported an earlier record failed: Lambda redelivered
      // everything from that record on (ReportBatchItemFailures' checkpoint rule), and the
      // redelivery archived it.
      else if (
        (deliveredIn.get(id) ?? []).some((n) => {
          const failed = failedAt.get(n);
          return failed !== undefined && failed < sequenceOf(id);
        })
      )
        stray.afterFailure++;
      else if (failedSends.has(id)) stray.failedSend++;
      else if ((objectsOf.get(id) ?? []).some((key) => lateKeys.has(key))) stray.latePut++;
      else {
        stray.unexplained++;
        const by = [...(storedBy.get(id) ?? [])].map((n) => `#${n} ${outcomes.get(n) ?? '?'}`);
        unexplainedStrays.push(
          `${id} stored by ${by.join(', ') || 'no send'}; dead-lettered (${deadLettered.get(id)}) in ${(deliveredIn.get(id) ?? []).map((n) => `#${n} ${outcomes.get(n) ?? '?'}`).join(', ')}`,
        );
      }
    }
    return {
      seed: options.seed,
      valid: options.records,
      poison: poison.size,
      shards: shards.length,
      invocations,
      seconds,
      injected,
      lost,
      mismatched,
      duplicatesAsRead: [...asRead.values()].filter((n) => n > 1).length,
      storedDuplicateRows: storedRows - objectsOf.size,
      poisonArchived: [...poison].filter((id) => objectsOf.has(id)).length,
      poisonDeadLettered: [...poison].filter((id) => deadLettered.get(id) === 'malformed').length,
      validDeadLettered,
      deadLetteredPastFailure,
      validDeadLetterCauses,
      outcomes: countOutcomes(outcomes),
      strayDeadLetters: stray,
      unexplainedStrays,
      processErrors,
      stalls,
      serverErrors,
      ...(maintenance === undefined ? {} : { maintenance: { ...maintenance, erasedTenantRowsLeft } }),
    };
  } finally {
    client.destroy();
    await server.stop();
    await escapes.stop();
  }
}

/** Every hour the soak's records fall in, with an hour of room either side. */
function archiveRange(client: S3Client) {
  return {
    client,
    bucket: BUCKET,
    prefix: ARCHIVE_PREFIX,
    table: TABLE,
    from: (START - 3_600) * 1000,
    to: (START + 6 * 3_600) * 1000,
  };
}

function tenantOfRecord(record: LambdaStreamRecord): string | undefined {
  const pk = record.dynamodb.Keys.pk?.S;
  return pk === undefined ? undefined : pk.slice(0, pk.indexOf('/'));
}

/**
 * Runs `redeliver` while compactArchive compacts every hour of the archive and eraseTenant erases
 * tenant 0 (with its dead letters), all under the run's faults. Both run again once the
 * redelivery is over and the faults have ended, as an operator would after a failed run: a run
 * that failed under the faults is reported, and only a failure of the second fails the soak.
 */
async function maintainDuringRedelivery(
  client: S3Client,
  log: (message: string) => void,
  redeliver: () => Promise<unknown>,
  endFaults: () => void,
): Promise<Omit<NonNullable<SoakResult['maintenance']>, 'erasedTenantRowsLeft'>> {
  const range = archiveRange(client);
  const failedRuns: string[] = [];
  const compact = () => compactArchive({ ...range, partitionBy: tenantOf, now: Date.UTC(2100, 0, 1) });
  const erase = () =>
    eraseTenant({
      ...range,
      tenant: ERASED_TENANT,
      partitionBy: tenantOf,
      deadLetter: { prefix: DEAD_LETTER_PREFIX },
    });
  const attempt = async <T>(label: string, run: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await run();
    } catch (error) {
      failedRuns.push(`${label}: ${(error as Error).name}: ${(error as Error).message}`);
      return undefined;
    }
  };
  const [, compacted, erasedReport] = await Promise.all([
    redeliver(),
    attempt('compactArchive', compact),
    attempt('eraseTenant', erase),
  ]);
  log(
    `redelivery done; compaction ${compacted ? 'ran' : 'failed'}, erase ${erasedReport ? 'ran' : 'failed'}`,
  );
  // Again after the redelivery, the faults over: what it wrote is compacted, the erase complete.
  endFaults();
  const again = await compact();
  const erasedAgain = await erase();
  return {
    compactedHours: (compacted?.hours.length ?? 0) + again.hours.length,
    erasedRows: (erasedReport?.rowsErased ?? 0) + erasedAgain.rowsErased,
    failedRuns,
  };
}

/** GetRecords-sized pages, so the emulator batches as it would from a stream. */
function* pagesOf(records: LambdaStreamRecord[], size: number): Generator<LambdaStreamRecord[]> {
  for (let i = 0; i < records.length; i += size) yield records.slice(i, i + size);
}

async function listKeys(client: S3Client, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(
      new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix, ContinuationToken: token }),
    );
    for (const item of page.Contents ?? []) if (item.Key) keys.push(item.Key);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys;
}

async function getBytes(client: S3Client, key: string): Promise<Uint8Array> {
  const object = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  return (object.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray();
}

function countOutcomes(outcomes: Map<number, string>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const outcome of outcomes.values()) {
    const kind = outcome.replace(/ at .*/, '');
    out[kind] = (out[kind] ?? 0) + 1;
  }
  return out;
}
