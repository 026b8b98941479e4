import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeObject, parseArchiveKey, rowToLambdaRecord } from '../../../src/archive/format.js';
import { planArchiveObjects } from '../../../src/archive/objects.js';
import {
  recordTenantSegment,
  tenantFromPartitionKey,
  tenantOfSegment,
  tenantProblem,
  tenantSegment,
} from '../../../src/archive/partition.js';
import type { ClassifiedRecord } from '../../../src/records/types.js';
import { ArchiveKeyError, InvalidTenantError } from '../../../src/sinks/index.js';
import { tenantRecords } from '../../support/tenant-records.js';

const layout = { prefix: 'archive', ttlAttribute: 'ttl', maxObjectBytes: 1 << 24, table: undefined };

/** Tenant ids tenantProblem accepts: any well-formed text but `/` and control characters. */
const validTenant = fc
  .string({ unit: 'binary', minLength: 1, maxLength: 30 })
  .filter((t) => tenantProblem(t) === undefined);

describe('tenant key segments', () => {
  it('are key-safe, reversible and never shared by two ids', () => {
    fc.assert(
      fc.property(validTenant, validTenant, (a, b) => {
        const sa = tenantSegment(a);
        expect(sa).toMatch(/^(?:[A-Za-z0-9._-]|![0-9A-F]{2})+$/);
        expect(tenantOfSegment(sa)).toBe(a);
        if (a !== b) expect(tenantSegment(b)).not.toBe(sa);
      }),
      { numRuns: 500 },
    );
  });

  it('keep plain ids as they are and escape the rest byte by byte', () => {
    expect(tenantSegment('acme-EU_2.0')).toBe('acme-EU_2.0');
    expect(tenantSegment('acme corp')).toBe('acme!20corp');
    expect(tenantSegment('a!b')).toBe('a!21b');
    expect(tenantSegment('a=b')).toBe('a!3Db');
    expect(tenantSegment('zürich')).toBe('z!C3!BCrich');
    // Only the canonical spelling names a tenant: `!61` is not another way to write `a`.
    expect(tenantOfSegment('!61')).toBeUndefined();
    expect(tenantOfSegment('a/b')).toBeUndefined();
  });

  it('refuse a `/`, an empty id, control characters and lone surrogates with InvalidTenantError', () => {
    for (const bad of ['acme/eu', '/', '', 'a\nb', 'a\u0000', '\uD800x']) {
      expect(() => tenantSegment(bad), JSON.stringify(bad)).toThrow(InvalidTenantError);
    }
    expect(() => tenantSegment('acme/eu')).toThrow(/must not contain '\/'/);
    expect(() => tenantSegment('€'.repeat(100))).toThrow(/would be 900 characters/);
  });
});

describe('tenantFromPartitionKey (reference 004: the tenant id leads the partition key)', () => {
  const [record] = tenantRecords(1, ['acme']);

  it('takes the text before the first #, the whole value without one, a number as its text', () => {
    const of = tenantFromPartitionKey();
    expect(of(record!)).toBe('acme');
    const rewrite = (pk: { S: string } | { N: string }) =>
      ({
        ...record!,
        raw: { ...record!.raw, dynamodb: { ...record!.raw.dynamodb, Keys: { pk } } },
      }) as ClassifiedRecord;
    expect(of(rewrite({ S: 'globex' }))).toBe('globex');
    expect(of(rewrite({ N: '42' }))).toBe('42');
    expect(tenantFromPartitionKey({ attribute: 'sk', separator: '#' })(record!)).toBe('event');
    expect(() => of(rewrite({ S: '#orphan' }))).toThrow(ArchiveKeyError);
    expect(() => tenantFromPartitionKey({ attribute: 'missing' })(record!)).toThrow(
      /no string or number key attribute 'missing'/,
    );
  });
});

describe('tenantFromPartitionKey: a number key by value', () => {
  const [record] = tenantRecords(1, ['acme']);
  const withPk = (pk: { N: string }) =>
    ({
      ...record!,
      raw: { ...record!.raw, dynamodb: { ...record!.raw.dynamodb, Keys: { pk } } },
    }) as ClassifiedRecord;

  it("files every spelling of one number under one tenant, DynamoDB's stored form", () => {
    const of = tenantFromPartitionKey();
    for (const n of ['1.5', '1.50', '15E-1', '0.15e1', '+1.5']) expect(of(withPk({ N: n })), n).toBe('1.5');
    expect(of(withPk({ N: '-0' }))).toBe('0');
    expect(of(withPk({ N: '4.2E+1' }))).toBe('42');
    expect(recordTenantSegment(of, withPk({ N: '1.50' }))).toBe(
      recordTenantSegment(of, withPk({ N: '1.5' })),
    );
  });

  it('fails a record whose number key DynamoDB could not hold as that record (ArchiveKeyError), naming no value', () => {
    const of = tenantFromPartitionKey();
    expect(() => recordTenantSegment(of, withPk({ N: 'secret' }))).toThrow(ArchiveKeyError);
    expect(() => recordTenantSegment(of, withPk({ N: 'secret' }))).not.toThrow(/secret/);
  });
});

describe('planArchiveObjects with partitionBy', () => {
  const partitionBy = tenantFromPartitionKey();

  it('puts each tenant in objects of its own, under tenant=<segment>/, nothing lost', () => {
    const records = tenantRecords(60, ['acme', 'globex', 'initech corp']);
    const { objects, failed, overflow } = planArchiveObjects(records, {
      ...layout,
      tenants: { partitionBy, maxPartitions: 100 },
    });
    expect(failed).toEqual([]);
    expect(overflow).toBe(0);
    expect(objects).toHaveLength(3);
    const byTenant = new Map(objects.map((o) => [parseArchiveKey(o.key)?.tenant, o]));
    expect([...byTenant.keys()].sort()).toEqual(['acme', 'globex', 'initech!20corp']);
    for (const [segment, object] of byTenant) {
      expect(object.records.every((r) => partitionBy(r) === tenantOfSegment(segment as string))).toBe(true);
    }
    expect(objects.reduce((n, o) => n + o.count, 0)).toBe(60);
  });

  it('above maxPartitions, files later tenants unpartitioned, the same way for a redelivered batch', () => {
    const tenants = Array.from({ length: 10 }, (_, i) => `t${i}`);
    const records = tenantRecords(100, tenants);
    const plan = () => planArchiveObjects(records, { ...layout, tenants: { partitionBy, maxPartitions: 4 } });
    const { objects, overflow } = plan();
    expect(objects.map((o) => parseArchiveKey(o.key)?.tenant ?? '(mixed)').sort()).toEqual([
      '(mixed)',
      't0',
      't1',
      't2',
      't3',
    ]);
    expect(overflow).toBe(60);
    // Deterministic: a redelivery of the same batch writes the same keys and bytes.
    expect(plan().objects.map((o) => [o.key, o.sha256])).toEqual(objects.map((o) => [o.key, o.sha256]));
  });

  it("writes each row's decoded tenant id into it, over the bound too; rows without partitionBy carry none", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(
          validTenant.filter((t) => !t.includes('#')),
          { minLength: 1, maxLength: 6 },
        ),
        fc.integer({ min: 1, max: 6 }),
        (tenants, maxPartitions) => {
          const records = tenantRecords(24, tenants);
          const { objects, failed } = planArchiveObjects(records, {
            ...layout,
            tenants: { partitionBy, maxPartitions },
          });
          expect(failed).toEqual([]);
          const rows = objects.flatMap((o) => decodeObject(o.body, o.key));
          expect(rows).toHaveLength(24);
          for (const row of rows) {
            expect(row.tenant).toBe(String(row.keys.pk?.S).split('#')[0]);
            // The field is the row's, not the record's: the record rebuilt from it is the one written.
            const written = records.find((r) => r.eventID === row.eventID) as ClassifiedRecord;
            expect(rowToLambdaRecord(row)).toEqual(written.raw);
          }
        },
      ),
      { numRuns: 40 },
    );
    const plain = planArchiveObjects(tenantRecords(4, ['acme']), layout);
    for (const o of plain.objects)
      for (const row of decodeObject(o.body, o.key)) expect(row).not.toHaveProperty('tenant');
  });

  it('fails only the record whose tenant cannot be told (retried, then dead-lettered)', () => {
    const records = tenantRecords(5, ['acme']);
    const broken = {
      ...records[2]!,
      raw: { ...records[2]!.raw, dynamodb: { ...records[2]!.raw.dynamodb, Keys: {} } },
    };
    const { objects, failed } = planArchiveObjects([...records.slice(0, 2), broken, ...records.slice(3)], {
      ...layout,
      tenants: { partitionBy, maxPartitions: 10 },
    });
    expect(failed.map((f) => f.sequenceNumber)).toEqual([broken.sequenceNumber]);
    expect(failed[0]?.error).toBeInstanceOf(ArchiveKeyError);
    expect(objects.reduce((n, o) => n + o.count, 0)).toBe(4);
    const slash = planArchiveObjects(records, {
      ...layout,
      tenants: { partitionBy: () => 'a/b', maxPartitions: 10 },
    });
    expect(slash.failed).toHaveLength(5);
    expect(String((slash.failed[0]?.error as Error | undefined)?.message)).toMatch(
      /partitionBy returned "a\/b": .*'\/'/,
    );
  });
});
