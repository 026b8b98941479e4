import { describe, expect, it } from 'vitest';
import {
  compilePattern,
  everyChange,
  inserts,
  matchesPattern,
  modifies,
  removes,
  ttlDeletes,
  userDeletes,
} from '../../../src/filters/index.js';
import type { LambdaStreamRecord } from '../../../src/records/index.js';
import { classifyRecord, RECORD_KINDS } from '../../../src/records/index.js';

// Records shaped as in the Lambda DynamoDB filtering docs (table keyed by CustomerName).
function record(
  overrides: Partial<LambdaStreamRecord> & { image?: Record<string, unknown> },
): LambdaStreamRecord {
  const { image, ...rest } = overrides;
  return {
    eventID: '1',
    eventVersion: '1.0',
    eventName: 'INSERT',
    eventSource: 'aws:dynamodb',
    awsRegion: 'us-east-1',
    dynamodb: {
      ApproximateCreationDateTime: 1678831218,
      Keys: { CustomerName: { S: 'AnyCompany Industries' } },
      NewImage: (image ?? {
        AccountManager: { S: 'Pat Candella' },
        PaymentTerms: { S: '60 days' },
        CustomerName: { S: 'AnyCompany Industries' },
      }) as never,
      SequenceNumber: '111',
      SizeBytes: 26,
      StreamViewType: 'NEW_IMAGE',
    },
    ...rest,
  };
}

const TTL_IDENTITY = { type: 'Service', principalId: 'dynamodb.amazonaws.com' };
const ttlDelete = record({ eventName: 'REMOVE', userIdentity: TTL_IDENTITY, image: undefined });
const userDelete = record({ eventName: 'REMOVE' });
const insert = record({});
const modify = record({ eventName: 'MODIFY' });

describe('AWS docs: filtering DynamoDB records', () => {
  it('table key', () => {
    const p = { dynamodb: { Keys: { CustomerName: { S: ['AnyCompany Industries'] } } } };
    expect(matchesPattern(p, insert)).toBe(true);
    expect(
      matchesPattern(p, record({ dynamodb: { ...insert.dynamodb, Keys: { CustomerName: { S: 'Other' } } } })),
    ).toBe(false);
  });

  it('table attribute', () => {
    const p = { dynamodb: { NewImage: { AccountManager: { S: ['Pat Candella'] } } } };
    expect(matchesPattern(p, insert)).toBe(true);
    expect(matchesPattern(p, record({ image: { AccountManager: { S: 'Someone' } } }))).toBe(false);
  });

  it('boolean attribute with OR of conditions', () => {
    const p = { dynamodb: { NewImage: { PaymentTerms: { S: ['60 days', '30 days'] } } } };
    expect(matchesPattern(p, insert)).toBe(true);
    expect(matchesPattern(p, record({ image: { PaymentTerms: { S: '90 days' } } }))).toBe(false);
  });

  it('exists:false under the type key (the docs\' "homemade" example)', () => {
    const p = { dynamodb: { NewImage: { homemade: { S: [{ exists: false }] } } } };
    expect(matchesPattern(p, insert)).toBe(true);
    expect(matchesPattern(p, record({ image: { homemade: { S: 'yes' } } }))).toBe(false);
  });

  it('numeric on an N attribute never matches, because N is a JSON string', () => {
    const p = { dynamodb: { NewImage: { price: { N: [{ numeric: ['>', 0] }] } } } };
    expect(matchesPattern(p, record({ image: { price: { N: '100' } } }))).toBe(false);
    // Exact text does match.
    expect(
      matchesPattern(
        { dynamodb: { NewImage: { price: { N: ['100'] } } } },
        record({ image: { price: { N: '100' } } }),
      ),
    ).toBe(true);
  });

  it('numeric on a JSON-number field of the record works (SizeBytes, ApproximateCreationDateTime)', () => {
    expect(matchesPattern({ dynamodb: { SizeBytes: [{ numeric: ['<', 100] }] } }, insert)).toBe(true);
    expect(
      matchesPattern(
        { dynamodb: { ApproximateCreationDateTime: [{ numeric: ['>=', 1678831219] }] } },
        insert,
      ),
    ).toBe(false);
  });
});

describe('the TTL archive pattern from the DynamoDB docs', () => {
  const documented = { userIdentity: { type: ['Service'], principalId: ['dynamodb.amazonaws.com'] } };

  it('matches TTL deletes only', () => {
    expect(matchesPattern(documented, ttlDelete)).toBe(true);
    expect(matchesPattern(documented, userDelete)).toBe(false);
    expect(matchesPattern(documented, insert)).toBe(false);
    expect(matchesPattern(documented, modify)).toBe(false);
  });

  it('ttlDeletes() contains the documented pattern plus eventName REMOVE', () => {
    expect(ttlDeletes()).toEqual({ ...documented, eventName: ['REMOVE'] });
    const m = compilePattern(ttlDeletes());
    expect([ttlDelete, userDelete, insert, modify].map(m)).toEqual([true, false, false, false]);
  });

  it('userDeletes() matches user deletes (with and without userIdentity) and nothing else', () => {
    const m = compilePattern(userDeletes());
    const userDeleteWithOtherIdentity = record({
      eventName: 'REMOVE',
      userIdentity: { type: 'User', principalId: 'someone' },
    });
    expect([userDelete, userDeleteWithOtherIdentity, ttlDelete, insert, modify].map(m)).toEqual([
      true,
      true,
      false,
      false,
      false,
    ]);
  });

  it('agrees with classifyRecord on these records', () => {
    for (const r of [ttlDelete, userDelete, insert, modify]) {
      const kind = classifyRecord(r);
      expect(matchesPattern(ttlDeletes(), r)).toBe(kind === 'ttl-delete');
      expect(matchesPattern(userDeletes(), r)).toBe(kind === 'user-delete');
      expect(matchesPattern(inserts(), r)).toBe(kind === 'insert');
      expect(matchesPattern(modifies(), r)).toBe(kind === 'modify');
      expect(matchesPattern(removes(), r)).toBe(r.eventName === 'REMOVE');
      expect(matchesPattern(everyChange(), r)).toBe(RECORD_KINDS.includes(kind));
    }
  });

  it("a REMOVE with DynamoDB's principal but another type matches neither (DynamoDB never emits one)", () => {
    const odd = record({
      eventName: 'REMOVE',
      userIdentity: { type: 'User', principalId: 'dynamodb.amazonaws.com' },
    });
    expect(classifyRecord(odd)).toBe('user-delete');
    expect(matchesPattern(ttlDeletes(), odd)).toBe(false);
    expect(matchesPattern(userDeletes(), odd)).toBe(false);
  });

  it('ready-made patterns are fresh objects', () => {
    const a = ttlDeletes();
    (a.eventName as string[]).push('INSERT');
    expect(ttlDeletes().eventName).toEqual(['REMOVE']);
  });
});
