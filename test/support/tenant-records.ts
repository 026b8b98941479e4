import { parseStreamEvent } from '../../src/records/index.js';
import type { ClassifiedRecord, LambdaStreamRecord } from '../../src/records/types.js';
import { type SampleRecordOptions, sampleTtlDeleteRecords } from '../../src/sinks/sample-records.js';

/**
 * Realistic TTL deletes whose partition key leads with a tenant id (reference 004's multi-tenant
 * layout): record i belongs to `tenants[tenantOf(i)]` and has `pk = <tenant>#session#<i>`.
 */
export function tenantRecordsRaw(
  count: number,
  tenants: readonly string[],
  options: SampleRecordOptions & { tenantOf?: (i: number) => number } = {},
): LambdaStreamRecord[] {
  const tenantOf = options.tenantOf ?? ((i: number) => i % tenants.length);
  const start = options.start ?? 0;
  return sampleTtlDeleteRecords(count, options).map((record, n) => {
    const tenant = tenants[tenantOf(start + n)] as string;
    const pk = { S: `${tenant}#session#${start + n}` };
    const d = record.dynamodb;
    return {
      ...record,
      dynamodb: { ...d, Keys: { ...d.Keys, pk }, OldImage: { ...d.OldImage, pk } },
    };
  });
}

export function tenantRecords(
  count: number,
  tenants: readonly string[],
  options: SampleRecordOptions & { tenantOf?: (i: number) => number } = {},
): ClassifiedRecord[] {
  return parseStreamEvent(
    { Records: tenantRecordsRaw(count, tenants, options) },
    options.shardId === undefined ? undefined : { shardId: options.shardId },
  );
}
