import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  createRecordParser,
  InvalidAttributeValueError,
  marshall,
  parseStreamRecord,
  unmarshall,
  unmarshallValue,
} from '../../../src/records/index.js';
import type { AttributeMap } from '../../../src/records/types.js';

const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64');
const filled = (size: number, seed: number): Uint8Array =>
  Uint8Array.from({ length: size }, (_, i) => (i * 31 + seed) & 255);

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('binaries: one buffer per image for those over 64 bytes', () => {
  it('decodes large binaries exactly, in maps, lists and sets, keeping key and member order', () => {
    const a = filled(100, 1);
    const b = filled(65, 2);
    const c = filled(200, 3);
    const small = filled(64, 4);
    const map: AttributeMap = {
      first: { B: b64(a) },
      n: { N: '1' },
      list: { L: [{ S: 'x' }, { B: b64(b) }, { B: b64(small) }] },
      nested: { M: { deep: { B: b64(c) } } },
      set: { BS: [b64(small), b64(c), b64(a)] },
      last: { S: 'end' },
    };
    const item = unmarshall(map);
    expect(Object.keys(item)).toEqual(['first', 'n', 'list', 'nested', 'set', 'last']);
    expect(item).toStrictEqual({
      first: a,
      n: 1,
      list: ['x', b, small],
      nested: { deep: c },
      set: new Set([small, c, a]),
      last: 'end',
    });
    expect(marshall(item, { binary: 'base64' })).toStrictEqual(map);
  });

  it('large binaries of one image are views of one buffer holding exactly them; small ones own theirs', () => {
    const item = unmarshall<{ a: Uint8Array; b: Uint8Array; s: Uint8Array; l: Uint8Array[] }>({
      a: { B: b64(filled(100, 1)) },
      s: { B: b64(filled(64, 2)) },
      b: { B: b64(filled(80, 3)) },
      l: { L: [{ B: b64(filled(70, 4)) }] },
    });
    const shared = item.a.buffer;
    expect(item.b.buffer).toBe(shared);
    expect(item.l[0]!.buffer).toBe(shared);
    expect(shared.byteLength).toBe(100 + 80 + 70);
    const views = [item.a, item.b, item.l[0]!].map((v) => [v.byteOffset, v.byteLength]);
    expect(views.sort((x, y) => x[0]! - y[0]!)).toEqual([
      [0, 100],
      [100, 80],
      [180, 70],
    ]);
    expect(item.s.buffer).not.toBe(shared);
    expect(item.s.buffer.byteLength).toBe(64);
    // slice() is the standalone copy.
    expect(item.b.slice().buffer.byteLength).toBe(80);
    expect(item.a.constructor).toBe(Uint8Array);
  });

  it('a lone large binary, and each image, has a buffer of exactly its own bytes', () => {
    const image = { a: { B: b64(filled(300, 5)) }, n: { N: '7' } };
    const one = unmarshall<{ a: Uint8Array }>(image);
    const two = unmarshall<{ a: Uint8Array }>(image);
    expect(one.a.buffer.byteLength).toBe(300);
    expect(one.a.byteOffset).toBe(0);
    expect(one.a.buffer).not.toBe(two.a.buffer);
    const value = unmarshallValue({ B: b64(filled(90, 6)) }) as Uint8Array;
    expect(value).toStrictEqual(filled(90, 6));
    expect(value.buffer.byteLength).toBe(90);
  });

  it('the new and old image of a record never share a buffer', () => {
    const image = { a: { B: b64(filled(100, 7)) }, b: { B: b64(filled(100, 8)) } };
    const record = parseStreamRecord({
      eventID: 'e',
      eventName: 'MODIFY',
      dynamodb: { Keys: { pk: { S: 'k' } }, NewImage: image, OldImage: image, SequenceNumber: '1' },
    });
    const next = record.newImage as { a: Uint8Array };
    const prev = record.oldImage as { a: Uint8Array };
    expect(next.a).toStrictEqual(prev.a);
    expect(next.a.buffer).not.toBe(prev.a.buffer);
    expect(next.a.buffer.byteLength).toBe(200);
  });

  it('keeps an attribute called __proto__ as data when its binary is deferred', () => {
    const map = JSON.parse(`{"__proto__":{"B":"${b64(filled(100, 9))}"},"x":{"B":"${b64(filled(70, 1))}"}}`);
    const item = unmarshall(map);
    expect(Object.getPrototypeOf(item)).toBe(Object.prototype);
    expect(Object.hasOwn(item, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(item, '__proto__')?.value).toStrictEqual(filled(100, 9));
  });

  it('takes SDK bytes in a set next to large base64 members, in order', () => {
    const sdk = filled(10, 1);
    const item = unmarshall({
      s: { BS: [b64(filled(100, 2)), sdk as unknown as string, b64(filled(3, 3))] },
    });
    expect([...(item.s as Set<Uint8Array>)]).toStrictEqual([filled(100, 2), sdk, filled(3, 3)]);
    expect([...(item.s as Set<Uint8Array>)][1]).toBe(sdk);
  });

  it('reports a bad large binary at its path, before any later bad value', () => {
    const bad = `${b64(filled(100, 1)).slice(0, 40)}$${b64(filled(100, 1)).slice(41)}`;
    const error = thrown(() =>
      unmarshall({ a: { M: { x: { L: [{ S: 'ok' }, { B: bad }] } } }, z: { N: 'not a number' } }),
    );
    expect(error).toBeInstanceOf(InvalidAttributeValueError);
    expect(error).toMatchObject({ reason: 'invalid-binary', path: 'a.x[1]' });
    expect((error as Error).message).toContain('(at a.x[1])');
    // A later binary does not hide an earlier error, nor an earlier one a later.
    expect(thrown(() => unmarshall({ n: { N: 'x' }, b: { B: bad } }))).toMatchObject({
      reason: 'invalid-number',
      path: 'n',
    });
    expect(thrown(() => unmarshall({ s: { BS: [b64(filled(90, 1)), bad] } }))).toMatchObject({
      reason: 'invalid-binary',
      path: 's[1]',
    });
    expect(thrown(() => unmarshallValue({ B: bad }))).toMatchObject({ reason: 'invalid-binary' });
  });

  it('throws what a walk decoding every binary in place throws (property)', () => {
    // Short binaries are decoded where they are met; the same map with every binary shortened,
    // valid or not as it was, is the reference for which error comes first and where.
    const bytes = fc.uint8Array({ minLength: 66, maxLength: 120 });
    const binary = fc.oneof(
      bytes.map((b) => ({ text: b64(b), ok: true })),
      fc.tuple(bytes, fc.nat()).map(([b, at]) => {
        const text = b64(b);
        const i = at % (text.length - 4);
        return { text: `${text.slice(0, i)}!${text.slice(i + 1)}`, ok: false };
      }),
    );
    const leaf = fc.oneof(
      binary.map((b) => ({ long: { B: b.text }, short: { B: b.ok ? 'AAAA' : 'A!AA' } })),
      // Distinct members, long and short alike (a member twice is an error of its own).
      fc.uniqueArray(binary, { minLength: 1, maxLength: 3, selector: (b) => b.text }).map((list) => ({
        long: { BS: list.map((b) => b.text) },
        short: { BS: list.map((b, i) => (b.ok ? ['AAAA', 'AAAB', 'AAAC'][i] : 'A!AA')) },
      })),
      fc.constantFrom('1', 'x', '2.5').map((N) => ({ long: { N }, short: { N } })),
      fc.constant({ long: { S: 's' }, short: { S: 's' } }),
    );
    type Pair = { long: unknown; short: unknown };
    const tree = fc.letrec<{ value: Pair; map: Pair }>((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        leaf,
        tie('map'),
        fc.array(tie('value'), { maxLength: 3 }).map(list),
      ),
      map: fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd'), tie('value'), { maxKeys: 4 }).map(mapOf),
    }));
    function list(values: Pair[]): Pair {
      return { long: { L: values.map((v) => v.long) }, short: { L: values.map((v) => v.short) } };
    }
    function mapOf(entries: Record<string, Pair>): Pair {
      const long: Record<string, unknown> = {};
      const short: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(entries)) {
        long[k] = v.long;
        short[k] = v.short;
      }
      return { long: { M: long }, short: { M: short } };
    }
    const outcome = (map: unknown) => {
      const error = thrown(() => unmarshall((map as { M: AttributeMap }).M));
      return error instanceof InvalidAttributeValueError ? { reason: error.reason, path: error.path } : error;
    };
    fc.assert(
      fc.property(tree.map, (pair) => {
        expect(outcome(pair.long)).toStrictEqual(outcome(pair.short));
      }),
      { numRuns: 500 },
    );
  });
});

describe('a parser reuses one conversion for its images', () => {
  const image = (seed: number, extra: AttributeMap = {}): AttributeMap => ({
    id: { S: `item-${seed}` },
    large: { B: b64(filled(100, seed)) },
    other: { L: [{ B: b64(filled(90, seed + 1)) }, { B: b64(filled(10, seed + 2)) }] },
    ...extra,
  });
  const record = (seq: string, newImage: AttributeMap) => ({
    eventID: `e${seq}`,
    eventName: 'INSERT',
    eventSourceARN: 'arn:aws:dynamodb:us-east-1:123456789012:table/t/stream/2026-01-01T00:00:00.000',
    dynamodb: { Keys: { id: newImage.id }, NewImage: newImage, SequenceNumber: seq },
  });

  it('gives each image its own bytes, across records, after an image that failed', () => {
    const parse = createRecordParser();
    const bad = parse(
      record(
        '2',
        image(20, {
          broken: {
            B: '!!not base64 at all, and long enough to be deferred!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!',
          },
        }),
      ),
    );
    expect(() => bad.newImage).toThrow(/dynamodb\.NewImage\.broken/);
    const first = parse(record('3', image(1))).newImage!;
    const second = parse(record('4', image(5))).newImage!;
    expect(first.large).toEqual(filled(100, 1));
    expect(second.large).toEqual(filled(100, 5));
    expect((first.other as Uint8Array[])[0]).toEqual(filled(90, 2));
    expect((second.other as Uint8Array[])[1]).toEqual(filled(10, 7));
    // Never a buffer shared between images.
    expect((first.large as Uint8Array).buffer).not.toBe((second.large as Uint8Array).buffer);
  });

  it('converts an image that a number policy reads while another image is being converted', () => {
    const records: { newImage: unknown }[] = [];
    const parse = createRecordParser({
      numbers: (text) => {
        // A policy that looks at other records mid-walk, one of them malformed: neither walk may
        // disturb this one's deferred binaries or nesting level.
        if (text !== '7') return Number(text);
        expect(() => records[2]!.newImage).toThrow(/dynamodb\.NewImage\.bad/);
        return (records[1]!.newImage as { large: Uint8Array }).large.length;
      },
    });
    records.push(parse(record('5', image(30, { n: { N: '7' }, after: { B: b64(filled(80, 9)) } }))));
    records.push(parse(record('6', image(40))));
    records.push(parse(record('7', image(50, { bad: { N: 'x' } }))));
    const outer = records[0]!.newImage as Record<string, unknown>;
    expect(outer.n).toBe(100);
    expect(outer.large).toEqual(filled(100, 30));
    expect((outer.other as Uint8Array[])[0]).toEqual(filled(90, 31));
    expect(outer.after).toEqual(filled(80, 9));
    expect((records[1]!.newImage as Record<string, unknown>).large).toEqual(filled(100, 40));
  });
});
