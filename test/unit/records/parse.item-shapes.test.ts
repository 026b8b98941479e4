import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exactNumber } from '../../../src/records/numbers.js';
import { createRecordParser } from '../../../src/records/parse.js';
import type { AttributeMap, AttributeValue } from '../../../src/records/types.js';
import { convertImage, imageConversion, unmarshall } from '../../../src/records/unmarshall.js';
import { lambdaRecord } from './fixtures.js';

// A parser builds each image on the attribute names of the images before it (convertItem). These
// check that an image is always exactly its own attributes, in its own order, whatever came before.

/** Names that behave differently as properties: array indices, __proto__, Object.prototype's. */
const NAMES = [
  'pk',
  'sk',
  'a',
  'b',
  'c',
  'd',
  'e',
  'f',
  'g',
  '0',
  '7',
  '__proto__',
  'constructor',
  'toString',
];

const value: fc.Arbitrary<AttributeValue> = fc.oneof(
  fc.string({ maxLength: 6 }).map((S) => ({ S })),
  fc.integer().map((n) => ({ N: String(n) })),
  fc.constantFrom<AttributeValue>(
    { B: 'AAEC/w==' },
    // Over 64 bytes: deferred to the image's shared buffer.
    { B: Buffer.alloc(90, 7).toString('base64') },
    { NULL: true },
    { BOOL: false },
    { SS: ['x', 'y'] },
    { M: { inner: { N: '1.50' } } },
  ),
);

/**
 * Names as a table's images carry them: mostly one of a few lists, in its order, sometimes with one
 * name more, one fewer or two swapped — so images start with the names of the shape before them,
 * extend it, fall short of it or leave it.
 */
const BASES = [
  ['pk', 'sk', 'a', 'b', 'c', 'd'],
  ['pk', 'sk', '__proto__', 'a', '7', 'b', 'constructor'],
  ['0', 'pk', 'sk', 'toString', 'e', 'f', 'g'],
];
const namesOf = (bases: readonly string[][]): fc.Arbitrary<string[]> =>
  fc
    .tuple(
      fc.constantFrom(...bases),
      fc.constantFrom('same', 'same', 'same', 'more', 'fewer', 'swap', 'other'),
      fc.nat(),
      fc.uniqueArray(fc.constantFrom(...NAMES), { maxLength: NAMES.length }),
    )
    .map(([base, edit, at, other]) => {
      const list = [...base];
      const i = at % list.length;
      if (edit === 'more') {
        const extra = NAMES.find((n) => !list.includes(n));
        if (extra !== undefined) list.splice(i, 0, extra);
      } else if (edit === 'fewer') list.splice(i, 1);
      else if (edit === 'swap' && i + 1 < list.length) [list[i], list[i + 1]] = [list[i + 1]!, list[i]!];
      else if (edit === 'other') return other;
      return list;
    });

const imageOf = (bases: readonly string[][]): fc.Arbitrary<AttributeMap> =>
  namesOf(bases)
    .chain((list) =>
      fc.tuple(fc.constant(list), fc.array(value, { minLength: list.length, maxLength: list.length })),
    )
    .map(([list, values]) => {
      const map: AttributeMap = {};
      list.forEach((name, i) => {
        Object.defineProperty(map, name, {
          value: values[i],
          enumerable: true,
          writable: true,
          configurable: true,
        });
      });
      return map;
    });
const image = imageOf(BASES);
/** A run of images of one table: one of the lists, edited now and then. */
const tableImages = fc
  .constantFrom(...BASES)
  .chain((base) => fc.array(imageOf([base]), { minLength: 5, maxLength: 30 }));

function record(newImage: AttributeMap, oldImage: AttributeMap | undefined, n: number) {
  return lambdaRecord({
    eventName: oldImage === undefined ? 'INSERT' : 'MODIFY',
    userIdentity: undefined,
    dynamodb: {
      ApproximateCreationDateTime: 1_795_330_000,
      Keys: { pk: { S: `k${n}` } },
      NewImage: newImage,
      ...(oldImage === undefined ? {} : { OldImage: oldImage }),
      SequenceNumber: String(1000 + n),
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    },
  });
}

function expectExactly(item: object | undefined, map: AttributeMap): void {
  // toEqual: toStrictEqual compares `constructor` by identity, which here is an attribute.
  expect(item).toEqual(unmarshall(map));
  expect(Object.keys(item as object)).toEqual(Object.keys(map));
  expect(Object.getPrototypeOf(item)).toBe(Object.prototype);
}

describe("a parser's images are their own attributes, whatever the images before them", () => {
  it('equal unmarshall of the same map, in its order, with no attribute of another image (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(image, fc.option(image, { nil: undefined })), { maxLength: 20 }),
        (pairs) => {
          const parse = createRecordParser();
          pairs.forEach(([next, prev], n) => {
            const parsed = parse(record(next, prev, n));
            expectExactly(parsed.newImage, next);
            if (prev !== undefined) expectExactly(parsed.oldImage, prev);
          });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('the same, for images built on a kept shape: the drawn names reach that path (property)', () => {
    let built = 0;
    fc.assert(
      fc.property(tableImages, (maps) => {
        const conversion = imageConversion(exactNumber);
        for (const map of maps) {
          const shape = conversion.shape;
          const onShape = shape !== undefined && conversion.shapeMisses < 2;
          expectExactly(convertImage(map, conversion, true), map);
          // A miss that kept a new shape also leaves no misses; an image built on it keeps the shape.
          if (onShape && conversion.shape === shape && conversion.shapeMisses === 0) built++;
        }
      }),
      { numRuns: 300 },
    );
    expect(built).toBeGreaterThan(300);
  });

  it('an image with more, fewer, reordered or other names than the shape before it', () => {
    const names = (list: string[]): AttributeMap =>
      Object.fromEntries(list.map((k, i) => [k, { N: String(i) }])) as AttributeMap;
    const base = ['pk', 'sk', '0', 'a', 'b', '10', 'c', 'd'];
    const parse = createRecordParser();
    const sequence = [
      base,
      base,
      // The shape is kept after two images in a row; these follow it.
      base,
      [...base, 'e'],
      base.slice(0, 5),
      ['sk', 'pk', '0', 'a', 'b', '10', 'c', 'd'],
      [...base, '5'],
      ['x', 'y', 'z', 'w', 'v'],
      base,
    ];
    sequence.forEach((list, n) => {
      const map = names(list);
      const parsed = parse(record(map, undefined, n));
      expectExactly(parsed.newImage, map);
      for (const name of ['pk', 'sk', '0', '5', '10', 'a', 'b', 'c', 'd', 'e', 'x']) {
        expect(Object.hasOwn(parsed.newImage as object, name)).toBe(list.includes(name));
      }
    });
  });

  it('an attribute called __proto__ stays data in an image built on a shape that has it', () => {
    const map = (): AttributeMap => {
      const m: AttributeMap = { a: { S: '1' }, b: { S: '2' } };
      Object.defineProperty(m, '__proto__', {
        value: { M: { polluted: { BOOL: true } } },
        enumerable: true,
        writable: true,
        configurable: true,
      });
      Object.assign(m, { c: { S: '3' }, d: { S: '4' } });
      return m;
    };
    const parse = createRecordParser();
    for (let n = 0; n < 4; n++) {
      const source = map();
      const item = parse(record(source, undefined, n)).newImage as Record<string, unknown>;
      expectExactly(item, source);
      expect(Object.keys(item)).toEqual(['a', 'b', '__proto__', 'c', 'd']);
      expect(Object.getPrototypeOf(item)).toBe(Object.prototype);
      expect(Object.getOwnPropertyDescriptor(item, '__proto__')?.value).toEqual({ polluted: true });
      expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    }
  });

  it('a reused conversion keeps names only: no value of an image it converted', () => {
    const conversion = imageConversion(exactNumber);
    const large = Buffer.alloc(120, 1).toString('base64');
    for (let n = 0; n < 3; n++) {
      const map: AttributeMap = {
        a: { B: large },
        b: { L: [{ B: large }] },
        c: { S: `secret${n}` },
        d: { N: '1' },
        e: { M: { f: { B: large } } },
      };
      expect(convertImage(map, conversion, true)).toEqual(unmarshall(map));
      expect(conversion.deferred.length).toBeGreaterThan(0);
      expect(conversion.deferred.every((slot) => slot === undefined)).toBe(true);
    }
    expect(conversion.shapeKeys).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(Object.values(conversion.shape as object).every((v) => v === undefined)).toBe(true);
  });

  it('images whose names never repeat: a shape is kept ever more rarely, and followed again once they do', () => {
    const conversion = imageConversion(exactNumber);
    const mapOf = (names: string[]): AttributeMap =>
      Object.fromEntries(names.map((k) => [k, { S: k }])) as AttributeMap;
    const kept: number[] = [];
    let last = conversion.shape;
    for (let n = 0; n < 400; n++) {
      const map = mapOf([`n${n}`, 'a', 'b', 'c', 'd']);
      expect(convertImage(map, conversion, true)).toEqual(unmarshall(map));
      if (conversion.shape !== last) kept.push(n);
      last = conversion.shape;
    }
    // Kept after 2 misses, then 4, 8, 16, 32, and every 64 from there on.
    expect(kept.slice(0, 6)).toEqual([1, 5, 13, 29, 61, 125]);
    expect(kept.slice(6)).toEqual([189, 253, 317, 381]);
    const repeated = mapOf(['x', 'a', 'b', 'c', 'd']);
    for (let n = 0; n < 64; n++) convertImage(repeated, conversion, true);
    expect(conversion.shapeKeys).toEqual(['x', 'a', 'b', 'c', 'd']);
    // Built on it: back to following a change after two misses.
    convertImage(repeated, conversion, true);
    const changed = mapOf(['y', 'a', 'b', 'c', 'd']);
    convertImage(changed, conversion, true);
    convertImage(changed, conversion, true);
    expect(conversion.shapeKeys).toEqual(['y', 'a', 'b', 'c', 'd']);
  });

  it('an image that fails mid-walk on the shape leaves the next one whole', () => {
    const conversion = imageConversion(exactNumber);
    const good = (n: number): AttributeMap => ({
      pk: { S: `p${n}` },
      sk: { N: String(n) },
      a: { B: Buffer.alloc(80, n).toString('base64') },
      b: { S: 'x' },
      c: { BOOL: true },
    });
    for (let n = 0; n < 3; n++) convertImage(good(n), conversion, true);
    const shape = conversion.shape;
    expect(shape).toBeDefined();
    // Its fourth attribute is not a number: thrown while the image is half built on the shape.
    const bad = { ...good(3), b: { N: 'not a number' } } as AttributeMap;
    expect(() => convertImage(bad, conversion, true)).toThrow(/N must be a decimal number/);
    expect(conversion.busy).toBe(false);
    expect(conversion.deferred.every((slot) => slot === undefined)).toBe(true);
    const next = good(4);
    expectExactly(convertImage(next, conversion, true), next);
    expect(conversion.shape).toBe(shape);
  });

  it('a number policy that reads another image mid-walk: both images whole', () => {
    const first = { pk: { S: 'p' }, sk: { N: '1' }, a: { S: 'a' }, b: { S: 'b' }, c: { N: '2' } };
    const second = { pk: { S: 'q' }, sk: { N: '3' }, a: { S: 'c' }, b: { S: 'd' }, c: { N: '4' } };
    let other: { newImage: unknown } | undefined;
    let nested: unknown;
    let reading = false;
    const parse = createRecordParser({
      numbers: (text) => {
        // While the first image converts, the other record's image converts on the same parser.
        if (other !== undefined && !reading) {
          reading = true;
          nested = other.newImage;
        }
        return Number(text);
      },
    });
    for (let n = 0; n < 3; n++) parse(record(first, undefined, n)).newImage;
    const outer = parse(record(first, undefined, 10));
    other = parse(record(second, undefined, 11));
    expect(outer.newImage).toEqual({ pk: 'p', sk: 1, a: 'a', b: 'b', c: 2 });
    expect(nested).toEqual({ pk: 'q', sk: 3, a: 'c', b: 'd', c: 4 });
    expect(Object.keys(nested as object)).toEqual(['pk', 'sk', 'a', 'b', 'c']);
  });
});
