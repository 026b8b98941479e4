import { describeError, InvalidOptionsError } from '../core/errors.js';
import { canonicalNumberText } from '../records/number-canonical.js';
import type { ClassifiedRecord } from '../records/types.js';
import { ArchiveKeyError, InvalidTenantError } from './errors.js';

/**
 * Names the tenant a record belongs to. The archive sinks put each tenant's rows in objects of
 * their own, under a `tenant=<id>/` key segment, so one tenant can be read or erased without
 * touching another's objects. Called once per record on the archive path: keep it cheap (read
 * `record.raw.dynamodb.Keys`, which needs no unmarshalling).
 */
export type TenantPartitioner = (record: ClassifiedRecord) => string;

/** Distinct tenants one batch may spread over before the rest share an unpartitioned object. */
export const DEFAULT_MAX_PARTITIONS_PER_BATCH = 100;

/** Kept as they are in a segment; every other character is escaped, so the mapping is reversible. */
const PLAIN = /^[A-Za-z0-9._-]$/;
const ESCAPE = '!';
/**
 * A key segment ends up as a directory name too (FileSink, `aws s3 sync`): most file systems
 * stop at 255 bytes, and `tenant=` takes 7.
 */
const MAX_SEGMENT = 248;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const CONTROL = /[\u0000-\u001f\u007f]/;
/** UTF-8 cannot encode one: two ids differing only there would share a segment. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Why `tenant` cannot be a tenant id, or undefined when it can. `/` is refused rather than
 * escaped: it is the key separator, and an id holding one is almost always a path or prefix
 * passed by mistake — an erase must fail, not quietly choose what it deletes.
 */
export function tenantProblem(tenant: unknown): string | undefined {
  if (typeof tenant !== 'string') return 'a tenant id must be a string';
  if (tenant === '') return 'a tenant id must not be empty';
  if (tenant.includes('/')) return "a tenant id must not contain '/' (the key separator)";
  if (CONTROL.test(tenant)) return 'a tenant id must not contain control characters';
  if (LONE_SURROGATE.test(tenant)) return 'a tenant id must be well-formed Unicode (no lone surrogates)';
  return undefined;
}

/**
 * The key segment value of a tenant id: letters, digits, `.`, `_` and `-` as they are, every
 * other character as `!` and two hex digits per UTF-8 byte (`acme corp` → `acme!20corp`). The
 * escape character is itself escaped, so two ids never share a segment and `tenantOfSegment`
 * gives the id back. Throws InvalidTenantError for an id `tenantProblem` refuses, or one whose
 * segment would pass 248 characters.
 */
export function tenantSegment(tenant: string): string {
  const problem = tenantProblem(tenant);
  if (problem !== undefined) throw new InvalidTenantError(tenant, problem);
  let out = '';
  for (const char of tenant) {
    if (PLAIN.test(char)) out += char;
    else
      for (const byte of Buffer.from(char, 'utf8'))
        out += `${ESCAPE}${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  if (out.length > MAX_SEGMENT) {
    throw new InvalidTenantError(
      tenant,
      `its key segment would be ${out.length} characters (at most ${MAX_SEGMENT})`,
    );
  }
  return out;
}

const SEGMENT = /^(?:[A-Za-z0-9._-]|![0-9A-F]{2})+$/;

/** The tenant id a segment value stands for; undefined for a value `tenantSegment` never writes. */
export function tenantOfSegment(segment: string): string | undefined {
  if (!SEGMENT.test(segment)) return undefined;
  const bytes: number[] = [];
  for (let i = 0; i < segment.length; i++) {
    if (segment[i] === ESCAPE) {
      bytes.push(Number.parseInt(segment.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(segment.charCodeAt(i));
  }
  try {
    const tenant = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(new Uint8Array(bytes));
    // Only the canonical spelling is a segment (`!41` for `A` is not): one tenant, one segment.
    return tenantSegment(tenant) === segment ? tenant : undefined;
  } catch {
    return undefined; // not UTF-8, or an id tenantSegment refuses
  }
}

/** Options of tenantFromPartitionKey: the key attribute and what ends the tenant id in it. */
export interface TenantFromPartitionKeyOptions {
  /** The partition key attribute. Default `pk`. */
  attribute?: string;
  /** What ends the tenant id inside the key's value. Default `#`. */
  separator?: string;
}

/**
 * The ready-made partitioner for multi-tenant tables whose partition key leads with the tenant
 * id (`acme#order#42` → `acme`; a value without the separator is the tenant id whole). A number
 * key is the tenant id as its canonical text (`1.50` and `15E-1` are tenant `1.5`, the form DynamoDB
 * stores): one item's rows are one tenant's whichever spelling a record carries. A record without the attribute, with a binary one, or with
 * an empty tenant id fails as that record (ArchiveKeyError): retried, then dead-lettered — never
 * filed under a made-up tenant.
 */
export function tenantFromPartitionKey(options: TenantFromPartitionKeyOptions = {}): TenantPartitioner {
  const attribute = options.attribute ?? 'pk';
  const separator = options.separator ?? '#';
  if (
    typeof attribute !== 'string' ||
    attribute === '' ||
    typeof separator !== 'string' ||
    separator === ''
  ) {
    throw new InvalidOptionsError(
      'tenantFromPartitionKey: attribute and separator must be non-empty strings',
    );
  }
  return (record) => {
    const value = record.raw.dynamodb.Keys[attribute];
    const text = value?.S ?? (value?.N === undefined ? undefined : canonicalNumberText(value.N));
    if (text === undefined) {
      throw new ArchiveKeyError(
        `no string or number key attribute '${attribute}' to take the tenant id from`,
        record,
      );
    }
    const at = text.indexOf(separator);
    const tenant = at < 0 ? text : text.slice(0, at);
    if (tenant === '')
      throw new ArchiveKeyError(
        `key attribute '${attribute}' starts with '${separator}': no tenant id`,
        record,
      );
    return tenant;
  };
}

/**
 * The tenant segment of one record, or the ArchiveKeyError that makes the record fail: a
 * partitioner's own ArchiveKeyError as it is, any other throw or an id `tenantSegment` refuses
 * wrapped with the record's identity.
 */
export function recordTenantSegment(partitionBy: TenantPartitioner, record: ClassifiedRecord): string {
  return recordTenant(partitionBy, record).segment;
}

/**
 * The tenant id of one record and its key segment, or the ArchiveKeyError that makes the record
 * fail (see recordTenantSegment). The sinks write the id into the row, the segment into the key.
 */
export function recordTenant(
  partitionBy: TenantPartitioner,
  record: ClassifiedRecord,
): { tenant: string; segment: string } {
  let tenant: unknown;
  try {
    tenant = partitionBy(record);
  } catch (error) {
    if (error instanceof ArchiveKeyError) throw error;
    throw new ArchiveKeyError(`partitionBy threw (${describeError(error)})`, record);
  }
  const problem = tenantProblem(tenant);
  if (problem !== undefined) {
    throw new ArchiveKeyError(`partitionBy returned ${JSON.stringify(tenant)}: ${problem}`, record);
  }
  try {
    return { tenant: tenant as string, segment: tenantSegment(tenant as string) };
  } catch (error) {
    throw new ArchiveKeyError(
      `partitionBy returned an unusable tenant id: ${(error as Error).message}`,
      record,
    );
  }
}
