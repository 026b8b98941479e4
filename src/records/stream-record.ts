import { lambdaShape } from './convert.js';
import { InvalidAttributeValueError, MalformedRecordError } from './errors.js';
import {
  type AttributeMap,
  type Item,
  type LambdaStreamRecord,
  type RecordKind,
  type RecordOrigin,
  STREAM_ORIGIN,
  type StreamEventName,
} from './types.js';
import { type Conversion, convertImage, imageConversion } from './unmarshall.js';

/** Everything a record needs from the parse options, computed once per parser. */
export interface RecordContext {
  /** Converts the images, reused for every record of the parser (see Conversion). */
  readonly conversion: Conversion;
  readonly streamArn: string | undefined;
  readonly shardId: string | undefined;
  readonly origin: RecordOrigin;
  /** The table, when the source names it rather than its ARN (a Kinesis record's payload). */
  readonly tableName: string | undefined;
}

/** Marks a lazily computed slot as not yet computed (undefined is a legitimate value). */
const UNSET: unique symbol = Symbol('unset');

export type MapName = 'Keys' | 'NewImage' | 'OldImage';

interface Source {
  eventID: string;
  eventName: StreamEventName;
  awsRegion?: string;
  eventSourceARN?: string;
  dynamodb: {
    ApproximateCreationDateTime?: number | Date;
    Keys: AttributeMap;
    NewImage?: AttributeMap;
    OldImage?: AttributeMap;
    SequenceNumber: string;
    SizeBytes?: number;
  };
}

/**
 * One classified record. Scalars are plain fields; keys, images, raw and tableName are
 * computed on first access and cached, so parsing a batch costs a few field reads per record
 * and a record nobody looks into is never unmarshalled.
 */
export class StreamRecord {
  /**
   * Keeps the map (hidden class) of a constructed StreamRecord alive. V8 holds the map an
   * instance reaches through its field initializers only weakly: when a full GC frees every
   * record of an event, the map goes, and the code optimized for it — the getters, the parser,
   * the engine's routing and sinks — is discarded ("deoptimization, reason: weak objects") and
   * recompiled on the next event. The class holds this record as long as it exists. Its undefined
   * fields start out general, so any later value fits in place and records of every source share
   * the map. Never read, never changed.
   */
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: held only to keep the instance map alive
  static readonly #shapeAnchor = new StreamRecord(
    { eventID: '', eventName: 'INSERT', dynamodb: { Keys: {}, SequenceNumber: '' } },
    'insert',
    {
      conversion: imageConversion((text) => text),
      streamArn: undefined,
      shardId: undefined,
      origin: STREAM_ORIGIN,
      tableName: undefined,
    },
  );

  readonly kind: RecordKind;
  readonly eventID: string;
  readonly eventName: StreamEventName;
  readonly sequenceNumber: string;
  readonly approximateCreationTime: number | undefined;
  readonly sizeBytes: number | undefined;
  readonly eventSourceARN: string | undefined;
  readonly awsRegion: string | undefined;
  readonly shardId: string | undefined;
  readonly origin: RecordOrigin;

  readonly #source: Source;
  // The images themselves, so the getters read no field of the event's objects: code that did
  // would be optimized for the event's maps, which die with it.
  readonly #keysMap: AttributeMap;
  readonly #newImageMap: AttributeMap | undefined;
  readonly #oldImageMap: AttributeMap | undefined;
  readonly #context: RecordContext;
  #keys: Item | typeof UNSET = UNSET;
  #newImage: Item | undefined | typeof UNSET = UNSET;
  #oldImage: Item | undefined | typeof UNSET = UNSET;
  /** Set from the start when the source already is in the Lambda shape with its ARN: the source itself. */
  #raw: LambdaStreamRecord | undefined;

  /** @internal Use parseStreamRecord / parseStreamEvent: they validate what this trusts. */
  constructor(source: Source, kind: RecordKind, context: RecordContext) {
    const d = source.dynamodb;
    const created = d.ApproximateCreationDateTime;
    this.kind = kind;
    this.eventID = source.eventID;
    this.eventName = source.eventName;
    this.sequenceNumber = d.SequenceNumber;
    this.approximateCreationTime =
      typeof created === 'number' || created === undefined ? created : created.getTime() / 1000;
    this.sizeBytes = d.SizeBytes;
    const arn = source.eventSourceARN ?? context.streamArn;
    this.eventSourceARN = arn;
    this.awsRegion = source.awsRegion ?? (arn === undefined ? undefined : arn.split(':')[3] || undefined);
    this.shardId = context.shardId;
    this.origin = context.origin;
    this.#source = source;
    this.#keysMap = d.Keys;
    this.#newImageMap = d.NewImage;
    this.#oldImageMap = d.OldImage;
    this.#context = context;
    const identity = (source as { userIdentity?: { Type?: unknown }; UserIdentity?: unknown }).userIdentity;
    const isRaw =
      source.eventSourceARN !== undefined &&
      typeof created !== 'object' &&
      (source as { UserIdentity?: unknown }).UserIdentity === undefined &&
      (identity == null || identity.Type === undefined);
    this.#raw = isRaw ? (source as unknown as LambdaStreamRecord) : undefined;
  }

  /** Parsed from eventSourceARN: `arn:aws:dynamodb:<region>:<account>:table/<name>/stream/<label>`. */
  get tableName(): string | undefined {
    const named = this.#context.tableName;
    if (named !== undefined) return named;
    const arn = this.eventSourceARN;
    if (arn === undefined) return undefined;
    const at = arn.indexOf(':table/');
    if (at < 0) return undefined;
    const start = at + 7;
    const end = arn.indexOf('/', start);
    return end < 0 ? arn.slice(start) : arn.slice(start, end);
  }

  get keys(): Item {
    if (this.#keys === UNSET) this.#keys = convertMapOf(this, this.#keysMap, 'Keys', this.#context) as Item;
    return this.#keys;
  }

  get newImage(): Item | undefined {
    if (this.#newImage === UNSET)
      this.#newImage = convertMapOf(this, this.#newImageMap, 'NewImage', this.#context);
    return this.#newImage;
  }

  get oldImage(): Item | undefined {
    if (this.#oldImage === UNSET)
      this.#oldImage = convertMapOf(this, this.#oldImageMap, 'OldImage', this.#context);
    return this.#oldImage;
  }

  /** The record in the Lambda shape. For a Lambda record it is the very object that arrived. */
  get raw(): LambdaStreamRecord {
    if (this.#raw === undefined) {
      this.#raw = lambdaShape(
        this.#source as unknown as Record<string, unknown>,
        this.#context.streamArn,
        this.awsRegion,
      );
    }
    return this.#raw;
  }

  /**
   * @internal This record with its images replaced: the pipeline's view for the sinks behind an
   * item schema, whose output they receive. Same source, so keys, raw and everything else are the
   * record's own (an archive behind a schema still writes the raw, lossless record), and the same
   * class, so the code optimized for stream records serves the views too.
   */
  withImages(newImage: Item | undefined, oldImage: Item | undefined): StreamRecord {
    const view = new StreamRecord(this.#source, this.kind, this.#context);
    view.#newImage = newImage;
    view.#oldImage = oldImage;
    view.#keys = this.#keys;
    view.#raw = this.#raw;
    return view;
  }

  /**
   * JSON (logs, captures) carries the identity and the raw record, never the unmarshalled
   * images: those may hold bigint and Uint8Array, and raw is the lossless form anyway.
   */
  toJSON(): object {
    return {
      kind: this.kind,
      eventID: this.eventID,
      eventName: this.eventName,
      sequenceNumber: this.sequenceNumber,
      approximateCreationTime: this.approximateCreationTime,
      sizeBytes: this.sizeBytes,
      eventSourceARN: this.eventSourceARN,
      tableName: this.tableName,
      awsRegion: this.awsRegion,
      shardId: this.shardId,
      origin: this.origin,
      raw: this.raw,
    };
  }

  get [Symbol.toStringTag](): string {
    return 'StreamRecord';
  }
}

/**
 * A record's keys or image, converted; a bad value is the record's MalformedRecordError. Not a
 * private method: a class with one gives each instance a brand slot (8 bytes per record).
 */
function convertMapOf(
  record: StreamRecord,
  map: AttributeMap | undefined,
  name: MapName,
  context: RecordContext,
): Item | undefined {
  if (map === undefined) return undefined;
  try {
    return convertImage(map, context.conversion, name !== 'Keys');
  } catch (error) {
    if (!(error instanceof InvalidAttributeValueError)) throw error;
    throw malformedImage(error, record, name);
  }
}

/** A bad value in a record's keys or an image, as the record's error: reason, detail and full path. */
export function malformedImage(
  error: InvalidAttributeValueError,
  record: { eventID: string; sequenceNumber: string },
  name: MapName,
): MalformedRecordError {
  const path = error.path;
  const number = error.reason === 'invalid-number' || error.reason === 'number-out-of-range';
  return new MalformedRecordError(
    number ? 'invalid-number' : 'invalid-attribute-value',
    error.detail,
    {
      eventID: record.eventID,
      sequenceNumber: record.sequenceNumber,
      path: path === '' ? `dynamodb.${name}` : `dynamodb.${name}.${path}`,
    },
    { cause: error },
  );
}
