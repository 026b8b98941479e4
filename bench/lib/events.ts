import type {
  AttributeMap,
  LambdaStreamEvent,
  LambdaStreamRecord,
  StreamEventName,
} from '../../src/records/types.js';
import { TTL_ATTRIBUTE } from '../peers/work.js';
import { createRandom, type Random } from './random.js';

export { TTL_ATTRIBUTE };

export interface EventOptions {
  /** PRNG seed; the same seed and count always give the same records. */
  seed: number;
  /** Number of records. */
  count: number;
  /** First sequence number (decimal string); each record's is larger than the previous one's. */
  firstSequence?: string;
  /** Epoch seconds of the first record's ApproximateCreationDateTime. */
  startTime?: number;
  tableName?: string;
  region?: string;
}

const OPTION_KEYS = new Set(['seed', 'count', 'firstSequence', 'startTime', 'tableName', 'region']);

/** The mix the benchmarks use, as cumulative thresholds of one uniform draw. */
export const EVENT_MIX = { insert: 0.45, modify: 0.45, userDelete: 0.05, ttlDelete: 0.05 } as const;

export const TTL_IDENTITY = { type: 'Service', principalId: 'dynamodb.amazonaws.com' } as const;

const DEFAULT_FIRST_SEQUENCE = '4900000000000000000000000';
const DEFAULT_START = 1_767_225_600; // 2026-01-01T00:00:00Z
const STATUSES = ['new', 'paid', 'shipped', 'delivered', 'returned'] as const;

function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/**
 * One ~1 KB item carrying every attribute type: S, N (ints, decimals, and a 38-digit number in
 * about one item in five), B, BOOL, NULL, SS, NS, BS, L and nested M.
 */
function item(rng: Random, id: number, version: number, ttl: number): AttributeMap {
  const map: AttributeMap = {
    pk: { S: `customer#${String(id % 5000).padStart(6, '0')}` },
    sk: { N: String(id) },
    version: { N: String(version) },
    title: { S: rng.text(rng.int(60, 120)) },
    description: { S: rng.text(rng.int(120, 200)) },
    status: { S: rng.pick(STATUSES) },
    price: { N: `${rng.int(0, 99999)}.${String(rng.int(0, 99)).padStart(2, '0')}` },
    quantity: { N: String(rng.int(1, 500)) },
    ratio: { N: `-0.${rng.digits(6)}` },
    active: { BOOL: rng.next() < 0.5 },
    deletedAt: { NULL: true },
    avatar: { B: toBase64(rng.bytes(rng.int(48, 96))) },
    tags: { SS: [`t${rng.int(0, 9)}`, `u${rng.int(10, 19)}`, `v${rng.int(20, 29)}`] },
    scores: { NS: [String(rng.int(0, 1000)), `${rng.int(0, 100)}.5`, String(-rng.int(1, 1000))] },
    blobs: { BS: [toBase64(rng.bytes(12)), toBase64(rng.bytes(16))] },
    history: {
      L: [
        { S: rng.text(16) },
        { N: String(rng.int(0, 1_000_000)) },
        { BOOL: true },
        { M: { at: { N: String(ttl - rng.int(1, 86_400)) }, by: { S: rng.text(8) } } },
      ],
    },
    address: {
      M: {
        street: { S: rng.text(rng.int(16, 32)) },
        city: { S: rng.text(10) },
        zip: { S: rng.digits(5) },
        geo: {
          M: {
            lat: { N: `${rng.int(-89, 89)}.${rng.digits(6)}` },
            lon: { N: `${rng.int(-179, 179)}.${rng.digits(6)}` },
          },
        },
        lines: { L: [{ S: rng.text(8) }, { NULL: true }] },
      },
    },
    [TTL_ATTRIBUTE]: { N: String(ttl) },
  };
  if (rng.next() < 0.2) {
    // DynamoDB allows 38 significant digits; JS numbers, util-dynamodb and middy's normalizer do not.
    map.ledger = { N: rng.digits(38) };
  }
  return map;
}

/**
 * Seeded synthetic stream records in the Lambda event shape (base64 binary, epoch-seconds
 * ApproximateCreationDateTime, eventSourceARN, lower-camel userIdentity on TTL deletes,
 * NEW_AND_OLD_IMAGES, strictly increasing sequence numbers). Mix: see EVENT_MIX.
 */
export function generateRecords(options: EventOptions): LambdaStreamRecord[] {
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.has(key)) throw new TypeError(`generateRecords: unknown option '${key}'`);
  }
  const { seed, count } = options;
  if (!Number.isInteger(count) || count < 0)
    throw new TypeError(`count must be a non-negative integer, got ${count}`);
  const rng = createRandom(seed);
  const table = options.tableName ?? 'bench-items';
  const region = options.region ?? 'us-east-1';
  const arn = `arn:aws:dynamodb:${region}:123456789012:table/${table}/stream/2026-01-01T00:00:00.000`;
  let sequence = BigInt(options.firstSequence ?? DEFAULT_FIRST_SEQUENCE);
  let time = options.startTime ?? DEFAULT_START;
  const records: LambdaStreamRecord[] = [];
  for (let i = 0; i < count; i++) {
    const draw = rng.next();
    const id = rng.int(0, 999_999);
    sequence += BigInt(rng.int(1, 1000)) * 100n;
    time += rng.int(0, 1);
    let eventName: StreamEventName;
    let ttlDelete = false;
    if (draw < EVENT_MIX.insert) eventName = 'INSERT';
    else if (draw < EVENT_MIX.insert + EVENT_MIX.modify) eventName = 'MODIFY';
    else {
      eventName = 'REMOVE';
      ttlDelete = draw >= EVENT_MIX.insert + EVENT_MIX.modify + EVENT_MIX.userDelete;
    }
    // A TTL-deleted item expired before the deletion; others expire in the future.
    const ttl = ttlDelete ? time - rng.int(60, 172_800) : time + rng.int(86_400, 90 * 86_400);
    const keys: AttributeMap = {
      pk: { S: `customer#${String(id % 5000).padStart(6, '0')}` },
      sk: { N: String(id) },
    };
    const dynamodb: LambdaStreamRecord['dynamodb'] = {
      ApproximateCreationDateTime: time,
      Keys: keys,
      SequenceNumber: sequence.toString(),
      SizeBytes: 0,
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    };
    if (eventName !== 'REMOVE') dynamodb.NewImage = item(rng, id, rng.int(2, 50), ttl);
    if (eventName !== 'INSERT') dynamodb.OldImage = item(rng, id, 1, ttl);
    dynamodb.SizeBytes =
      JSON.stringify(keys).length +
      JSON.stringify(dynamodb.NewImage ?? {}).length +
      JSON.stringify(dynamodb.OldImage ?? {}).length;
    const record: LambdaStreamRecord = {
      eventID: rng.text(32).replaceAll(' ', '0'),
      eventName,
      eventVersion: '1.1',
      eventSource: 'aws:dynamodb',
      awsRegion: region,
      dynamodb,
      eventSourceARN: arn,
    };
    if (ttlDelete) record.userIdentity = { ...TTL_IDENTITY };
    records.push(record);
  }
  return records;
}

export function generateEvent(options: EventOptions): LambdaStreamEvent {
  return { Records: generateRecords(options) };
}

/** `count` consecutive batches of `batchSize` records each, cut from one seeded stream. */
export function generateBatches(seed: number, batchSize: number, count: number): LambdaStreamEvent[] {
  const all = generateRecords({ seed, count: batchSize * count });
  const batches: LambdaStreamEvent[] = [];
  for (let i = 0; i < count; i++) batches.push({ Records: all.slice(i * batchSize, (i + 1) * batchSize) });
  return batches;
}
