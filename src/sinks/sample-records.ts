import { parseStreamEvent } from '../records/index.js';
import type { AttributeMap, AttributeValue, ClassifiedRecord, LambdaStreamRecord } from '../records/types.js';

export interface SampleRecordOptions {
  /** Index of the first record; sequence numbers and keys derive from it. Default 0. */
  start?: number;
  /** Table name in the eventSourceARN. Default `archive-sample`. */
  table?: string;
  /** ApproximateCreationDateTime of the first record, epoch seconds. Default 2026-01-15T10:00:00Z. */
  firstTime?: number;
  /** Seconds between consecutive records. Default 1. */
  spacingSeconds?: number;
  /** Set on the records as if a GetRecords poller read them. */
  shardId?: string;
}

const BASE_SEQUENCE = 10n ** 20n;

/** A stream sequence number as DynamoDB writes them: 21 decimal digits, increasing. */
export function sampleSequenceNumber(index: number): string {
  return (BASE_SEQUENCE + BigInt(index)).toString();
}

function streamArn(table: string): string {
  return `arn:aws:dynamodb:us-east-1:123456789012:table/${table}/stream/2026-01-01T00:00:00.000`;
}

function envelope(
  arn: string,
  eventID: string,
  eventName: LambdaStreamRecord['eventName'],
): Omit<LambdaStreamRecord, 'dynamodb'> {
  return {
    eventID,
    eventName,
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: 'us-east-1',
    eventSourceARN: arn,
  };
}

/**
 * A realistic item: composite key, a 38-digit number, binary, a string set, a nested map and
 * list. `item` names it (its key), `version` varies its values (a modify changes them), `ttl`
 * is its TTL attribute; `pk` replaces the default partition key (a tenant's).
 */
function sampleImage(item: number, version: number, ttl: number, pk?: string): AttributeMap {
  const payload = Buffer.alloc(24 + (version % 16));
  for (let b = 0; b < payload.length; b++) payload[b] = (version * 31 + b * 7) & 0xff;
  return {
    pk: { S: pk ?? `session#${item % 997}` },
    sk: { S: `event#${item.toString().padStart(10, '0')}` },
    amount: { N: `${12345678901234567890123456789012345678n + BigInt(version)}` },
    ratio: { N: `0.${(version * 7919).toString().padStart(6, '0')}` },
    precise: {
      N: `1234567890123456789012345.${(version % 10_000_000_000_000).toString().padStart(13, '0')}`,
    },
    payload: { B: payload.toString('base64') },
    tags: { SS: ['archived', `bucket-${version % 13}`] },
    attrs: {
      M: {
        user: { S: `user-${item % 5000}` },
        hits: { N: String(version % 1000) },
        ok: { BOOL: version % 2 === 0 },
      },
    },
    path: { L: [{ S: '/home' }, { S: `/item/${item}` }, { NULL: true }] },
    ttl: { N: String(Math.floor(ttl)) },
  };
}

/**
 * Realistic TTL-delete stream records in the Lambda shape (what `Records` of a Lambda event holds):
 * composite keys, a 38-digit number, binary, a string set, a nested map and list.
 */
export function sampleTtlDeleteRecords(
  count: number,
  options: SampleRecordOptions = {},
): LambdaStreamRecord[] {
  const start = options.start ?? 0;
  const table = options.table ?? 'archive-sample';
  const firstTime = options.firstTime ?? Date.UTC(2026, 0, 15, 10) / 1000;
  const spacing = options.spacingSeconds ?? 1;
  const arn = streamArn(table);
  const out: LambdaStreamRecord[] = new Array(count);
  for (let n = 0; n < count; n++) {
    const i = start + n;
    const created = firstTime + n * spacing;
    const image = sampleImage(i, i, created - 5);
    out[n] = {
      ...envelope(arn, `ev-${i.toString(16).padStart(8, '0')}`, 'REMOVE'),
      userIdentity: { type: 'Service', principalId: 'dynamodb.amazonaws.com' },
      dynamodb: {
        ApproximateCreationDateTime: created,
        Keys: { pk: image.pk as AttributeValue, sk: image.sk as AttributeValue },
        OldImage: image,
        SequenceNumber: sampleSequenceNumber(i),
        SizeBytes: 420,
        StreamViewType: 'NEW_AND_OLD_IMAGES',
      },
    };
  }
  return out;
}

/** Sample records parsed as a stream event, with the shard id a GetRecords poller would set. */
function parsed(raw: LambdaStreamRecord[], options: SampleRecordOptions): ClassifiedRecord[] {
  return parseStreamEvent(
    { Records: raw },
    options.shardId === undefined ? undefined : { shardId: options.shardId },
  );
}

/** `sampleTtlDeleteRecords`, parsed into classified records. */
export function sampleTtlDeletes(count: number, options: SampleRecordOptions = {}): ClassifiedRecord[] {
  return parsed(sampleTtlDeleteRecords(count, options), options);
}

/** Changes per 20 of a change log's sample: 5 inserts, 12 modifies, 3 deletes (25% / 60% / 15%). */
export const SAMPLE_CHANGE_MIX = { insert: 5, modify: 12, delete: 3 } as const;

/** Options of sampleChangeRecords: those of the TTL deletes, and the table's items and tenants. */
export interface SampleChangeOptions extends SampleRecordOptions {
  /** Items in the table before the first change: what the first modifies and deletes act on. Default 100. */
  liveItems?: number;
  /** Tenant ids: item n's partition key is `<tenants[n % length]>#item#<n>`. Default none (`session#…`). */
  tenants?: readonly string[];
}

/**
 * A change log's stream in the Lambda shape: inserts, modifies and deletes of realistic items in
 * SAMPLE_CHANGE_MIX's proportions, each item's changes in order (an insert creates it, modifies
 * change it with both images, a delete — TTL for two in three, the user's otherwise — ends the
 * oldest one). A pure function of its arguments, as sampleTtlDeleteRecords.
 */
export function sampleChangeRecords(count: number, options: SampleChangeOptions = {}): LambdaStreamRecord[] {
  const start = options.start ?? 0;
  const firstTime = options.firstTime ?? Date.UTC(2026, 0, 15, 10) / 1000;
  const spacing = options.spacingSeconds ?? 1;
  const arn = streamArn(options.table ?? 'archive-sample');
  const tenants = options.tenants;
  const pkOf = (item: number) =>
    tenants === undefined || tenants.length === 0
      ? undefined
      : `${tenants[item % tenants.length]}#item#${item}`;
  const live: number[] = Array.from({ length: options.liveItems ?? 100 }, (_, item) => item);
  const versions = new Map<number, number>();
  let nextItem = live.length;
  let deletes = 0;
  const { insert, modify } = SAMPLE_CHANGE_MIX;
  const cycle = insert + modify + SAMPLE_CHANGE_MIX.delete;
  const out: LambdaStreamRecord[] = new Array(count);
  for (let n = 0; n < count; n++) {
    const i = start + n;
    const created = firstTime + n * spacing;
    // 7 is prime to the cycle: each cycle visits every slot once, the kinds interleaved.
    const slot = (i * 7) % cycle;
    const kind = slot < insert || live.length === 0 ? 'insert' : slot < insert + modify ? 'modify' : 'delete';
    const item =
      kind === 'insert'
        ? nextItem++
        : kind === 'modify'
          ? (live[i % live.length] as number)
          : (live.shift() as number);
    const version = versions.get(item) ?? item;
    const image = (v: number) => sampleImage(item, v, created + 86_400 * 30, pkOf(item));
    const base = envelope(arn, `ev-${i.toString(16).padStart(8, '0')}`, 'INSERT');
    const d = {
      ApproximateCreationDateTime: created,
      Keys: {} as AttributeMap,
      SequenceNumber: sampleSequenceNumber(i),
      SizeBytes: 420,
      StreamViewType: 'NEW_AND_OLD_IMAGES' as const,
    };
    let record: LambdaStreamRecord;
    if (kind === 'insert') {
      live.push(item);
      versions.set(item, version);
      record = { ...base, dynamodb: { ...d, NewImage: image(version) } };
    } else if (kind === 'modify') {
      versions.set(item, version + 1);
      record = {
        ...base,
        eventName: 'MODIFY',
        dynamodb: { ...d, OldImage: image(version), NewImage: image(version + 1), SizeBytes: 840 },
      };
    } else {
      versions.delete(item);
      const ttl = deletes++ % 3 !== 2;
      record = {
        ...base,
        eventName: 'REMOVE',
        ...(ttl ? { userIdentity: { type: 'Service', principalId: 'dynamodb.amazonaws.com' } } : {}),
        dynamodb: { ...d, OldImage: image(version) },
      };
    }
    const shown = record.dynamodb.NewImage ?? record.dynamodb.OldImage ?? {};
    record.dynamodb.Keys = { pk: shown.pk as AttributeValue, sk: shown.sk as AttributeValue };
    out[n] = record;
  }
  return out;
}

/** `sampleChangeRecords`, parsed into classified records. */
export function sampleChanges(count: number, options: SampleChangeOptions = {}): ClassifiedRecord[] {
  return parsed(sampleChangeRecords(count, options), options);
}
