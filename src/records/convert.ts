import type { _Record } from '@aws-sdk/client-dynamodb-streams';
import { defineOptions } from '../core/options.js';
import { toBase64, toBytes } from './binary.js';
import { identityOf } from './classify.js';
import { MalformedRecordError } from './errors.js';
import { MAX_NESTING_LEVEL } from './limits.js';
import type { AttributeMap, LambdaStreamRecord, LambdaUserIdentity } from './types.js';

type AnyValue = Record<string, unknown>;

/** Lambda: `userIdentity.{type,principalId}`; GetRecords: `userIdentity.{Type,PrincipalId}`. */
interface IdentityLike {
  type?: string;
  principalId?: string;
  Type?: string;
  PrincipalId?: string;
}
type AnyMap = Record<string, AnyValue>;

/**
 * Copies an attribute map converting binaries; the two wire shapes differ only there.
 * Values of other types are shared, not copied: they are immutable strings or nested maps
 * converted here in turn. `level` is the nesting level of the map's values: below DynamoDB's
 * deepest a value is shared as it is (it is malformed anyway, and walking a corrupted image
 * thousands of levels deep would end in a RangeError).
 */
function mapBinaries(map: AnyMap, convert: (b: unknown) => unknown, level = 1): AnyMap {
  const out: AnyMap = {};
  for (const key in map) {
    const value = valueBinaries(map[key] as AnyValue, convert, level);
    if (key === '__proto__')
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    else out[key] = value;
  }
  return out;
}

function valueBinaries(av: AnyValue, convert: (b: unknown) => unknown, level: number): AnyValue {
  if (av === null || typeof av !== 'object' || level > MAX_NESTING_LEVEL) return av;
  if (av.B !== undefined) return { ...av, B: convert(av.B) };
  if (Array.isArray(av.BS)) return { ...av, BS: av.BS.map(convert) };
  if (Array.isArray(av.L))
    return { ...av, L: av.L.map((v: AnyValue) => valueBinaries(v, convert, level + 1)) };
  if (av.M !== null && typeof av.M === 'object')
    return { ...av, M: mapBinaries(av.M as AnyMap, convert, level + 1) };
  return av;
}

const asBase64 = (b: unknown) => (b instanceof Uint8Array ? toBase64(b) : b);
const asBytes = (b: unknown) => (typeof b === 'string' ? toBytes(b) : b);

/** Internal: an SDK attribute map (Scan, GetItem: binary as bytes) in the JSON shape (binary as base64). */
export function toJsonAttributeMap(map: Record<string, unknown>): AttributeMap {
  return mapBinaries(map as AnyMap, asBase64) as unknown as AttributeMap;
}

/** Internal: the inverse, for a key read back from JSON (a checkpoint) into an SDK call. */
export function toSdkAttributeMap(map: AttributeMap): Record<string, unknown> {
  return mapBinaries(map as unknown as AnyMap, asBytes);
}

function convertMaps(dynamodb: AnyValue, convert: (b: unknown) => unknown): void {
  for (const key of ['Keys', 'NewImage', 'OldImage'] as const) {
    const map = dynamodb[key];
    if (map !== null && typeof map === 'object') dynamodb[key] = mapBinaries(map as AnyMap, convert);
  }
}

export function regionFromArn(arn: string | undefined): string | undefined {
  if (arn === undefined || !arn.startsWith('arn:')) return undefined;
  return arn.split(':')[3] || undefined;
}

/** Internal: SDK (or already Lambda) shape to Lambda shape. The input is never modified. */
export function lambdaShape(
  record: Record<string, unknown>,
  streamArn: string | undefined,
  awsRegion: string | undefined,
): LambdaStreamRecord {
  const { UserIdentity, userIdentity, dynamodb, ...rest } = record as {
    UserIdentity?: IdentityLike;
    userIdentity?: IdentityLike;
    dynamodb?: AnyValue;
  } & Record<string, unknown>;
  const out: Record<string, unknown> = { ...rest };
  if (out.eventSourceARN === undefined && streamArn !== undefined) out.eventSourceARN = streamArn;
  if (out.awsRegion === undefined) {
    const region = awsRegion ?? regionFromArn(out.eventSourceARN as string | undefined);
    if (region !== undefined) out.awsRegion = region;
  }
  if (dynamodb !== null && typeof dynamodb === 'object') {
    const d: AnyValue = { ...dynamodb };
    const created = d.ApproximateCreationDateTime;
    if (created instanceof Date) d.ApproximateCreationDateTime = created.getTime() / 1000;
    convertMaps(d, asBase64);
    out.dynamodb = d;
  } else if (dynamodb !== undefined) {
    out.dynamodb = dynamodb;
  }
  const identity = userIdentity ?? UserIdentity;
  if (identity !== null && typeof identity === 'object') {
    out.userIdentity = {
      type: identity.type ?? identity.Type,
      principalId: identity.principalId ?? identity.PrincipalId,
    } as LambdaUserIdentity;
  } else if (identity !== undefined) out.userIdentity = identity;
  return out as unknown as LambdaStreamRecord;
}

/** Options of toLambdaRecord: what a GetRecords record lacks that a Lambda record carries. */
export interface ToLambdaRecordOptions {
  /** The stream's ARN; GetRecords records do not carry it, Lambda records do (eventSourceARN). */
  streamArn: string;
  /** Used when the record has no awsRegion; default: the region in streamArn. */
  awsRegion?: string;
}

const readOptions = /* @__PURE__ */ defineOptions<ToLambdaRecordOptions>()('toLambdaRecord', {
  streamArn: { kind: 'nonEmptyString', required: true },
  awsRegion: { kind: 'string' },
});

function requireRecord(record: unknown, where: string): Record<string, unknown> {
  if (record === null || typeof record !== 'object' || Array.isArray(record)) {
    throw new MalformedRecordError('not-an-object', `${where} takes a stream record object`, {});
  }
  const r = record as Record<string, unknown>;
  if (r.dynamodb === null || typeof r.dynamodb !== 'object') {
    throw new MalformedRecordError('missing-dynamodb', 'the record has no dynamodb object', identityOf(r));
  }
  return r;
}

/**
 * A GetRecords record (@aws-sdk/client-dynamodb-streams) in the Lambda event shape: epoch
 * seconds, lower-camel userIdentity members, base64 binaries, eventSourceARN. Already-Lambda records
 * pass through unchanged in value, so the conversion is idempotent.
 */
export function toLambdaRecord(
  sdkRecord: _Record | LambdaStreamRecord,
  options: ToLambdaRecordOptions,
): LambdaStreamRecord {
  const { streamArn, awsRegion } = readOptions(options);
  return lambdaShape(requireRecord(sdkRecord, 'toLambdaRecord'), streamArn, awsRegion);
}

/**
 * The inverse, for replay through the SDK shape and for captures: a Date timestamp,
 * `userIdentity.{Type,PrincipalId}`, Uint8Array binaries, no eventSourceARN (GetRecords has none).
 */
export function toGetRecordsRecord(lambdaRecord: LambdaStreamRecord | _Record): _Record {
  const record = requireRecord(lambdaRecord, 'toGetRecordsRecord');
  const {
    userIdentity,
    UserIdentity,
    eventSourceARN: _arn,
    dynamodb,
    ...rest
  } = record as {
    userIdentity?: IdentityLike;
    UserIdentity?: IdentityLike;
    eventSourceARN?: string;
    dynamodb: AnyValue;
  } & Record<string, unknown>;
  const d: AnyValue = { ...dynamodb };
  const created = d.ApproximateCreationDateTime;
  if (typeof created === 'number') d.ApproximateCreationDateTime = new Date(created * 1000);
  convertMaps(d, asBytes);
  const out: Record<string, unknown> = { ...rest, dynamodb: d };
  const identity = userIdentity ?? UserIdentity;
  if (identity !== null && typeof identity === 'object') {
    out.userIdentity = {
      PrincipalId: identity.PrincipalId ?? identity.principalId,
      Type: identity.Type ?? identity.type,
    };
  } else if (identity !== undefined) out.userIdentity = identity;
  return out as _Record;
}
