import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  anyOfPatterns,
  compileFilterCriteria,
  compilePattern,
  eventNames,
  type FilterPattern,
  filterPattern,
  keyAttribute,
  matchesPattern,
  newImageAttribute,
  oldImageAttribute,
  toFilterCriteria,
  ttlDeletes,
  userDeletes,
} from '../../../src/filters/index.js';
import type { AttributeMap, LambdaStreamRecord, StreamEventName } from '../../../src/records/index.js';
import { classifyRecord } from '../../../src/records/index.js';

const TTL_PRINCIPAL = 'dynamodb.amazonaws.com';
const STATUSES = ['active', 'inactive', 'Active', 'pending', ''] as const;
const PRICES = ['0', '1', '42', '42.5', '-3', '100'] as const;
const COLORS = ['red', 'green', 'blue'] as const;
const CITIES = ['Paris', 'Oslo', 'paris'] as const;
const EVENT_NAMES: StreamEventName[] = ['INSERT', 'MODIFY', 'REMOVE'];

const identity = fc.option(
  fc.record({
    type: fc.constantFrom('Service', 'User'),
    principalId: fc.constantFrom(TTL_PRINCIPAL, 'events.amazonaws.com', 'AIDAEXAMPLE'),
  }),
  { nil: undefined },
);

/** An image whose attributes sometimes have the expected type, sometimes another, sometimes none. */
const image: fc.Arbitrary<AttributeMap> = fc
  .record(
    {
      status: fc.oneof(
        fc.constantFrom(...STATUSES).map((S) => ({ S })),
        fc.constant({ N: '1' }),
        fc.constant({ NULL: true }),
      ),
      price: fc.oneof(
        fc.constantFrom(...PRICES).map((N) => ({ N })),
        fc.constant({ S: '42' }),
      ),
      flag: fc.oneof(
        fc.boolean().map((BOOL) => ({ BOOL })),
        fc.constant({ NULL: true }),
      ),
      tags: fc.uniqueArray(fc.constantFrom(...COLORS), { minLength: 1 }).map((SS) => ({ SS })),
      address: fc.constantFrom(...CITIES).map((city) => ({ M: { city: { S: city }, zip: { N: '75001' } } })),
      items: fc
        .array(
          fc.oneof(
            fc.constantFrom(...COLORS).map((S) => ({ S })),
            fc.constant({ N: '1' }),
          ),
          { maxLength: 3 },
        )
        .map((L) => ({ L })),
    },
    { requiredKeys: [] },
  )
  .map((m) => m as AttributeMap);

const streamRecord: fc.Arbitrary<LambdaStreamRecord> = fc
  .record({
    eventName: fc.constantFrom(...EVENT_NAMES),
    userIdentity: identity,
    pk: fc.tuple(fc.constantFrom('USER#', 'ORDER#', 'user#'), fc.nat(99)).map(([p, n]) => `${p}${n}`),
    newImage: fc.option(image, { nil: undefined }),
    oldImage: fc.option(image, { nil: undefined }),
    seq: fc.nat(),
  })
  .map(({ eventName, userIdentity, pk, newImage, oldImage, seq }) => {
    const r: LambdaStreamRecord = {
      eventID: `e${seq}`,
      eventName,
      eventSource: 'aws:dynamodb',
      awsRegion: 'us-east-1',
      dynamodb: {
        ApproximateCreationDateTime: 1_700_000_000,
        Keys: { pk: { S: pk } },
        SequenceNumber: String(seq),
        SizeBytes: 100,
        StreamViewType: 'NEW_AND_OLD_IMAGES',
        ...(newImage ? { NewImage: { pk: { S: pk }, ...newImage } } : {}),
        ...(oldImage ? { OldImage: { pk: { S: pk }, ...oldImage } } : {}),
      },
    };
    if (userIdentity) r.userIdentity = userIdentity;
    return r;
  });

type Predicate = (r: LambdaStreamRecord) => boolean;
interface Spec {
  slot: string;
  fragment: FilterPattern;
  predicate: Predicate;
}

const sideOf = (r: LambdaStreamRecord, side: 'new' | 'old') =>
  side === 'new' ? r.dynamodb.NewImage : r.dynamodb.OldImage;
const attributeOf = (side: 'new' | 'old', name: string) =>
  side === 'new' ? newImageAttribute(name) : oldImageAttribute(name);
const nonEmptySubset = <T>(values: readonly T[]) =>
  fc.uniqueArray(fc.constantFrom(...values), { minLength: 1 });
const side = fc.constantFrom('new' as const, 'old' as const);

/** Builder fragments paired with the plain-TypeScript predicate they are meant to express. */
const spec: fc.Arbitrary<Spec> = fc.oneof(
  nonEmptySubset(EVENT_NAMES).map((names) => ({
    slot: 'eventName',
    fragment: eventNames(...names),
    predicate: (r: LambdaStreamRecord) => names.includes(r.eventName),
  })),
  fc.tuple(fc.constantFrom('USER#', 'ORDER#', 'user#'), fc.boolean()).map(([p, ignoreCase]) => ({
    slot: 'pk',
    fragment: keyAttribute('pk').S.prefix(p, { ignoreCase }),
    predicate: (r: LambdaStreamRecord) => {
      const s = r.dynamodb.Keys.pk?.S ?? '';
      return ignoreCase ? s.toLowerCase().startsWith(p.toLowerCase()) : s.startsWith(p);
    },
  })),
  fc
    .tuple(
      side,
      fc.constantFrom('equals', 'anythingBut', 'equalsIgnoreCase', 'exists', 'notExists'),
      nonEmptySubset(STATUSES),
    )
    .map(([s, op, values]) => {
      const S = attributeOf(s, 'status').S;
      const value = (r: LambdaStreamRecord) => sideOf(r, s)?.status?.S;
      const table: Record<string, [FilterPattern, Predicate]> = {
        equals: [S.equals(...values), (r) => values.includes(value(r) as never)],
        anythingBut: [
          S.anythingBut(...values),
          (r) => value(r) !== undefined && !values.includes(value(r) as never),
        ],
        equalsIgnoreCase: [
          S.equalsIgnoreCase(values[0] as string),
          (r) => value(r)?.toLowerCase() === (values[0] as string).toLowerCase(),
        ],
        exists: [S.exists(), (r) => value(r) !== undefined],
        notExists: [S.notExists(), (r) => value(r) === undefined],
      };
      const [fragment, predicate] = table[op] as [FilterPattern, Predicate];
      return { slot: `${s}.status`, fragment, predicate };
    }),
  fc
    .tuple(side, fc.constantFrom('suffix', 'suffixIgnoringCase'), fc.constantFrom('ve', 'VE', 'ing', ''))
    .map(([s, op, affix]) => {
      const ignoreCase = op === 'suffixIgnoringCase';
      return {
        slot: `${s}.status`,
        fragment: attributeOf(s, 'status').S.suffix(affix, { ignoreCase }),
        predicate: (r: LambdaStreamRecord) => {
          const v = sideOf(r, s)?.status?.S;
          if (v === undefined) return false;
          return ignoreCase ? v.toLowerCase().endsWith(affix.toLowerCase()) : v.endsWith(affix);
        },
      };
    }),
  side.map((s) => ({
    slot: `${s}.status.NULL`,
    fragment: attributeOf(s, 'status').NULL.exists(),
    predicate: (r: LambdaStreamRecord) => sideOf(r, s)?.status?.NULL !== undefined,
  })),
  fc.tuple(side, nonEmptySubset(PRICES)).map(([s, values]) => ({
    slot: `${s}.price`,
    fragment: attributeOf(s, 'price').N.equals(...values),
    predicate: (r: LambdaStreamRecord) => values.includes(sideOf(r, s)?.price?.N as never),
  })),
  fc.tuple(side, nonEmptySubset(PRICES)).map(([s, values]) => ({
    slot: `${s}.price`,
    fragment: attributeOf(s, 'price').N.anythingBut(...values),
    predicate: (r: LambdaStreamRecord) => {
      const n = sideOf(r, s)?.price?.N;
      return n !== undefined && !values.includes(n as never);
    },
  })),
  fc.tuple(side, fc.constantFrom(...COLORS)).map(([s, color]) => ({
    slot: `${s}.items`,
    fragment: attributeOf(s, 'items').L.element().S.equals(color),
    predicate: (r: LambdaStreamRecord) => (sideOf(r, s)?.items?.L ?? []).some((e) => e.S === color),
  })),
  fc.tuple(side, fc.boolean()).map(([s, b]) => ({
    slot: `${s}.flag`,
    fragment: attributeOf(s, 'flag').BOOL.equals(b),
    predicate: (r: LambdaStreamRecord) => sideOf(r, s)?.flag?.BOOL === b,
  })),
  fc.tuple(side, nonEmptySubset(COLORS)).map(([s, values]) => ({
    slot: `${s}.tags`,
    fragment: attributeOf(s, 'tags').SS.contains(...values),
    predicate: (r: LambdaStreamRecord) =>
      (sideOf(r, s)?.tags?.SS ?? []).some((c) => values.includes(c as never)),
  })),
  fc.tuple(side, fc.constantFrom(...CITIES)).map(([s, city]) => ({
    slot: `${s}.address`,
    fragment: attributeOf(s, 'address').M.attribute('city').S.equals(city),
    predicate: (r: LambdaStreamRecord) => sideOf(r, s)?.address?.M?.city?.S === city,
  })),
);

const specs = fc.uniqueArray(spec, { minLength: 1, maxLength: 4, selector: (s) => s.slot });

describe('property: builder patterns select exactly what the equivalent predicate selects', () => {
  it('over generated Lambda stream records', () => {
    fc.assert(
      fc.property(specs, fc.array(streamRecord, { minLength: 1, maxLength: 20 }), (chosen, records) => {
        const p = filterPattern(...chosen.map((s) => s.fragment));
        const matcher = compilePattern(p);
        const fromJson = compilePattern(JSON.stringify(p));
        const deployed = compileFilterCriteria(toFilterCriteria(p));
        for (const r of records) {
          const expected = chosen.every((s) => s.predicate(r));
          expect(matcher(r)).toBe(expected);
          expect(fromJson(r)).toBe(expected);
          expect(deployed(r)).toBe(expected);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('$or (anyOfPatterns) ANDed with other fragments selects what (p && (q || r)) selects', () => {
    const distinct = fc.uniqueArray(spec, { minLength: 3, maxLength: 5, selector: (s) => s.slot });
    fc.assert(
      fc.property(distinct, fc.array(streamRecord, { minLength: 1, maxLength: 20 }), (chosen, records) => {
        const [q, r, ...rest] = chosen as [Spec, Spec, ...Spec[]];
        const p = filterPattern(...rest.map((s) => s.fragment), anyOfPatterns(q.fragment, r.fragment));
        const matcher = compilePattern(p);
        const deployed = compileFilterCriteria(toFilterCriteria(p));
        for (const record of records) {
          const expected =
            rest.every((s) => s.predicate(record)) && (q.predicate(record) || r.predicate(record));
          expect(matcher(record)).toBe(expected);
          expect(deployed(record)).toBe(expected);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('several filters on a mapping OR together', () => {
    fc.assert(
      fc.property(fc.array(specs, { minLength: 1, maxLength: 5 }), streamRecord, (filters, r) => {
        const patterns = filters.map((f) => filterPattern(...f.map((s) => s.fragment)));
        const expected = filters.some((f) => f.every((s) => s.predicate(r)));
        expect(compileFilterCriteria(toFilterCriteria(patterns))(r)).toBe(expected);
      }),
      { numRuns: 200 },
    );
  });
});

describe('property: ready-made patterns agree with classifyRecord', () => {
  it('ttlDeletes() matches exactly the records classified ttl-delete', () => {
    fc.assert(
      fc.property(streamRecord, (r) => {
        expect(matchesPattern(ttlDeletes(), r)).toBe(classifyRecord(r) === 'ttl-delete');
      }),
      { numRuns: 500 },
    );
  });

  it('userDeletes() matches exactly the user deletes, identity or not (DynamoDB never pairs its principal with another type)', () => {
    const realistic = streamRecord.filter(
      (r) => !(r.userIdentity?.principalId === TTL_PRINCIPAL && r.userIdentity.type !== 'Service'),
    );
    fc.assert(
      fc.property(realistic, (r) => {
        expect(matchesPattern(userDeletes(), r)).toBe(classifyRecord(r) === 'user-delete');
      }),
      { numRuns: 500 },
    );
  });
});

describe('property: operator semantics', () => {
  it('numbers match by value whatever their JSON spelling (3.0e2 vs 300)', () => {
    fc.assert(
      fc.property(fc.integer({ min: -4_000_000, max: 4_000_000 }), fc.nat(6), (n, shift) => {
        const digits = String(Math.abs(n));
        // Same value written as mantissa × 10^k, e.g. 300 → 3.00e2 or 0.300e3.
        const mantissa =
          shift <= digits.length
            ? `${digits.slice(0, digits.length - shift) || '0'}.${digits.slice(digits.length - shift)}0`
            : `0.${'0'.repeat(shift - digits.length)}${digits}`;
        const spelled = `${n < 0 ? '-' : ''}${mantissa}e${shift}`;
        const event = JSON.parse(`{"a": ${spelled}}`);
        expect(matchesPattern({ a: [n] }, event)).toBe(true);
        expect(matchesPattern({ a: [{ numeric: ['=', n] }] }, event)).toBe(true);
        expect(matchesPattern({ a: [{ 'anything-but': [n] }] }, event)).toBe(false);
        expect(matchesPattern({ a: [String(n)] }, event)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('every value with up to six decimals in ±5e9 is representable, however JSON.parse rounds it', () => {
    // Micro-unit integers over the whole supported range, written out as decimal text.
    const micros = fc.integer({ min: -5_000_000_000_000_000, max: 5_000_000_000_000_000 });
    const text = (m: number) => {
      const a = Math.abs(m);
      return `${m < 0 ? '-' : ''}${Math.floor(a / 1e6)}.${String(a % 1e6).padStart(6, '0')}`;
    };
    // A bound at either end would make `<` or `>=` an empty range, which is refused.
    const inner = fc.integer({ min: -4_999_999_999_999_999, max: 4_999_999_999_999_999 });
    fc.assert(
      fc.property(micros, inner, (m, other) => {
        const event = JSON.parse(`{"a": ${text(m)}}`);
        const value = event.a as number;
        expect(matchesPattern({ a: [{ numeric: ['=', value] }] }, event)).toBe(true);
        expect(matchesPattern({ a: [{ 'anything-but': value }] }, event)).toBe(false);
        const bound = Number(text(other));
        expect(matchesPattern({ a: [{ numeric: ['<', bound] }] }, event)).toBe(m < other);
        expect(matchesPattern({ a: [{ numeric: ['>=', bound] }] }, event)).toBe(m >= other);
      }),
      { numRuns: 1000 },
    );
  });

  it('numeric ranges agree with plain comparisons', () => {
    const cents = fc.integer({ min: -1_000_000, max: 1_000_000 }).map((i) => i / 100);
    fc.assert(
      fc.property(cents, cents, cents, fc.boolean(), fc.boolean(), (x, y, v, openLow, openHigh) => {
        fc.pre(x !== y);
        const [low, high] = x < y ? [x, y] : [y, x];
        const p = {
          a: [{ numeric: [openLow ? '>' : '>=', low, openHigh ? '<' : '<=', high] }],
        } as FilterPattern;
        const expected = (openLow ? v > low : v >= low) && (openHigh ? v < high : v <= high);
        expect(matchesPattern(p, { a: v })).toBe(expected);
        expect(matchesPattern(p, { a: String(v) })).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it('event arrays match element-wise', () => {
    const word = fc.constantFrom('a', 'b', 'c', 'd');
    fc.assert(
      fc.property(
        fc.array(word, { maxLength: 5 }),
        fc.uniqueArray(word, { minLength: 1 }),
        (values, wanted) => {
          expect(matchesPattern({ a: wanted }, { a: values })).toBe(values.some((v) => wanted.includes(v)));
          expect(matchesPattern({ a: [{ 'anything-but': wanted }] }, { a: values })).toBe(
            values.some((v) => !wanted.includes(v)),
          );
          expect(matchesPattern({ a: [{ exists: false }] }, { a: values })).toBe(values.length === 0);
          expect(matchesPattern({ a: [{ exists: true }] }, { a: values })).toBe(values.length > 0);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('prefix / suffix / equals-ignore-case / wildcard agree with string predicates', () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'B', 'c', '*', '.'), maxLength: 6 });
    const plain = fc.string({ unit: fc.constantFrom('a', 'B', 'c', '.'), maxLength: 3 });
    fc.assert(
      fc.property(text, plain, plain, (value, affix, other) => {
        const event = { a: value };
        expect(matchesPattern({ a: [{ prefix: affix }] }, event)).toBe(value.startsWith(affix));
        expect(matchesPattern({ a: [{ suffix: affix }] }, event)).toBe(value.endsWith(affix));
        expect(matchesPattern({ a: [{ prefix: { 'equals-ignore-case': affix } }] }, event)).toBe(
          value.toLowerCase().startsWith(affix.toLowerCase()),
        );
        expect(matchesPattern({ a: [{ 'equals-ignore-case': affix }] }, event)).toBe(
          value.toLowerCase() === affix.toLowerCase(),
        );
        expect(matchesPattern({ a: [{ wildcard: `${affix}*${other}` }] }, event)).toBe(
          value.length >= affix.length + other.length && value.startsWith(affix) && value.endsWith(other),
        );
      }),
      { numRuns: 500 },
    );
  });
});
