import { NumberValueImpl as SdkNumberValue } from '@aws-sdk/util-dynamodb';
import fc from 'fast-check';

/** A DynamoDB number text: up to 38 significant digits, exponent within 1E-130 … 9.99E+125. */
export const numberText = fc
  .record({
    negative: fc.boolean(),
    digits: fc.stringMatching(/^[1-9][0-9]{0,37}$/),
    exponent: fc.integer({ min: -130, max: 88 }),
    form: fc.constantFrom('plain', 'scientific', 'decimal'),
  })
  .map(({ negative, digits, exponent, form }) => {
    const sign = negative ? '-' : '';
    if (form === 'plain') return `${sign}${digits}`;
    if (form === 'scientific')
      return `${sign}${digits[0]}.${digits.slice(1) || '0'}E${exponent >= 0 ? '+' : ''}${exponent}`;
    const point = Math.max(1, Math.floor(digits.length / 2));
    return `${sign}${digits.slice(0, point)}.${digits.slice(point)}0`.replace(/\.0$/, '.5');
  });

const edgeNumberText = fc.constantFrom(
  '0',
  '-1',
  '1E-130',
  '-1E-130',
  '9.9999999999999999999999999999999999999E+125',
  '-9.9999999999999999999999999999999999999E+125',
  '12345678901234567890123456789012345678',
  '0.00000000000000000000000000000000000001',
  '9007199254740993',
  '100000000000000000000',
  '1.50',
  '0.1',
);

/**
 * Set members unique by value, as DynamoDB keeps them (`1.5` and `1.50` are one member): texts
 * whose doubles differ certainly differ in value (stricter than needed, never wrong).
 */
const byValue = { selector: (t: string) => Number(t), comparator: 'SameValueZero' } as const;

function binaryKey(b: string | Uint8Array): string {
  return typeof b === 'string' ? Buffer.from(b, 'base64').toString('hex') : Buffer.from(b).toString('hex');
}

const safeNumber = fc.oneof(
  fc.maxSafeInteger(),
  fc
    .double({ min: -Number.MAX_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER, noNaN: true })
    .filter((d) => d === 0 || Math.abs(d) >= 1e-130)
    .map((d) => (Object.is(d, -0) ? 0 : d)),
);

const bigInteger = fc.bigInt({ min: -(10n ** 38n) + 1n, max: 10n ** 38n - 1n });

const sdkNumber = fc.oneof(numberText, edgeNumberText).map((text) => new SdkNumberValue(text));

const text = fc.string({ unit: 'binary', maxLength: 12 });
/**
 * Binaries of both sizes unmarshall treats differently: up to 64 bytes each gets its own buffer,
 * larger ones of one image share one (src/records/unmarshall.ts).
 */
const bytes = fc.oneof(
  { arbitrary: fc.uint8Array({ maxLength: 16 }), weight: 4 },
  { arbitrary: fc.uint8Array({ minLength: 60, maxLength: 160 }), weight: 1 },
);
const name = fc
  .string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 8 })
  .filter((k) => k !== '__proto__');

function base64(b: Uint8Array): string {
  return Buffer.from(b).toString('base64');
}

/**
 * Items util-dynamodb's marshall accepts, of every DynamoDB type. `exact: false` restricts
 * numbers to what util-dynamodb's default unmarshall returns without loss (safe numbers).
 */
export function itemArbitrary({ exact }: { exact: boolean }) {
  const number = exact ? fc.oneof(safeNumber, bigInteger, sdkNumber) : safeNumber;
  const numberSet = exact
    ? fc
        .uniqueArray(fc.oneof(numberText, edgeNumberText), { minLength: 1, maxLength: 5, ...byValue })
        .map((texts) => new Set(texts.map((t) => new SdkNumberValue(t))))
    : fc.uniqueArray(fc.maxSafeInteger(), { minLength: 1, maxLength: 5 }).map((ns) => new Set(ns));
  const scalar = fc.oneof(
    text,
    number,
    bytes,
    fc.boolean(),
    fc.constant(null),
    fc.uniqueArray(text, { minLength: 1, maxLength: 5 }).map((ss) => new Set(ss)),
    numberSet,
    fc.uniqueArray(bytes, { minLength: 1, maxLength: 4, selector: base64 }).map((bs) => new Set(bs)),
  );
  const tree = fc.letrec((tie) => ({
    value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, tie('list'), tie('map')),
    list: fc.array(tie('value'), { maxLength: 4 }),
    map: fc.dictionary(name, tie('value'), { maxKeys: 4, noNullPrototype: true }),
  }));
  return fc.dictionary(name, tree.value, { minKeys: 1, maxKeys: 6, noNullPrototype: true });
}

/** `levels` maps (or lists) around a string: the string sits `levels` levels below the value. */
function nested(levels: number, list: boolean): unknown {
  let value: unknown = { S: 'deep' };
  for (let i = 0; i < levels; i++) value = list ? { L: [value] } : { M: { n: value } };
  return value;
}

/**
 * DynamoDB JSON attribute maps, mostly valid, with malformed AttributeValues mixed in at any
 * depth: every rule unmarshall enforces (type key count — including undefined-valued keys —,
 * S/N/B/BOOL/NULL shapes, number syntax, base64, set members, L/M shapes, and DynamoDB's limits:
 * numbers' range and precision, no empty set, no member twice, 32 levels of nesting) has a
 * generator that breaks it, and near-misses that are still valid (unpadded base64,
 * `{ S: undefined, N: '1' }`, nesting just within the limit where it lands high enough).
 */
export function attributeMapArbitrary() {
  const base64Text = fc.oneof(
    bytes.map(base64),
    bytes.map((b) => base64(b).replace(/=+$/, '')),
    bytes.map((b) => Buffer.from(b).toString('base64url')),
  );
  const badBase64 = fc.oneof(
    fc.constantFrom('Y', 'YQ=', 'YQ===', 'ab$=', 'YWJj\u0100', '====', 'A==='),
    fc.string({ maxLength: 9 }),
    // Long enough to be deferred to the image's shared buffer, with one bad character.
    fc
      .tuple(
        fc.uint8Array({ minLength: 66, maxLength: 120 }),
        fc.nat(),
        fc.constantFrom('$', ' ', '\u0100', '='),
      )
      .map(([b, at, bad]) => {
        const text = base64(b);
        const i = at % (text.length - 4);
        return `${text.slice(0, i)}${bad}${text.slice(i + 1)}`;
      }),
  );
  const badNumber = fc.oneof(
    fc.constantFrom('', 'abc', '1e', '--1', '1.2.3', ' 1', '0x10', 'Infinity', 'NaN', '+'),
    fc.string({ maxLength: 6 }),
  );
  const anyNumber = fc.oneof(numberText, edgeNumberText);
  const outOfRange = fc.constantFrom(
    '1E-131',
    '-9E-131',
    '1E+126',
    '-1E+126',
    '0.1E+127',
    `1${'2'.repeat(38)}`,
    `1.${'1'.repeat(38)}`,
    `${'9'.repeat(39)}E-10`,
  );
  const validScalar = fc.oneof(
    text.map((S) => ({ S })),
    anyNumber.map((N) => ({ N })),
    base64Text.map((B) => ({ B })),
    bytes.map((B) => ({ B })),
    fc.boolean().map((BOOL) => ({ BOOL })),
    fc.constant({ NULL: true }),
    fc.uniqueArray(text, { minLength: 1, maxLength: 3 }).map((SS) => ({ SS })),
    fc.uniqueArray(anyNumber, { minLength: 1, maxLength: 3, ...byValue }).map((NS) => ({ NS })),
    fc
      .uniqueArray(fc.oneof(base64Text, bytes), { minLength: 1, maxLength: 3, selector: binaryKey })
      .map((BS) => ({ BS })),
    anyNumber.map((N) => ({ S: undefined, N })),
  );
  const junk = fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.constant(undefined), text);
  const malformed = fc.oneof(
    fc.constantFrom<unknown>(
      {},
      { S: undefined },
      { S: undefined, N: undefined },
      { S: 'a', N: '1' },
      { X: 'a' },
      { '': 'a' },
      { NULL: false },
      { BOOL: 'true' },
      { M: [] },
      { M: null },
      { L: {} },
      { SS: 'a' },
      null,
      'S',
      [],
      7,
    ),
    junk.map((S) => ({ S })).filter((v) => typeof v.S !== 'string'),
    fc.oneof(badNumber, junk).map((N) => ({ N })),
    fc.oneof(badBase64, junk).map((B) => ({ B })),
    fc.array(fc.oneof(text, junk), { minLength: 1, maxLength: 3 }).map((SS) => ({ SS })),
    fc.array(fc.oneof(anyNumber, badNumber, junk), { minLength: 1, maxLength: 3 }).map((NS) => ({ NS })),
    fc.array(fc.oneof(base64Text, badBase64, junk), { minLength: 1, maxLength: 3 }).map((BS) => ({ BS })),
    fc.dictionary(
      fc.constantFrom('S', 'N', 'B', 'BOOL', 'NULL', 'SS', 'NS', 'BS', 'L', 'M', 'Y'),
      fc.oneof(junk, text, anyNumber),
      { minKeys: 1, maxKeys: 3 },
    ),
    // DynamoDB's limits.
    outOfRange.map((N) => ({ N })),
    fc.tuple(anyNumber, outOfRange).map((NS) => ({ NS })),
    fc.constantFrom({ SS: [] }, { NS: [] }, { BS: [] }),
    text.map((t) => ({ SS: [t, 'other', t] })),
    fc
      .constantFrom(['1', '1.0'], ['1', '1E0'], ['0', '-0'], ['10', '1E+1'], ['-2.50', '-0.25E1'])
      .map((NS) => ({ NS })),
    bytes.map((b) => ({ BS: [base64(b), base64(b).replace(/=+$/, '')] })),
    bytes.map((b) => ({ BS: [b, base64(b)] })),
    fc.tuple(fc.integer({ min: 28, max: 40 }), fc.boolean()).map(([levels, list]) => nested(levels, list)),
  );
  const tree = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      { arbitrary: validScalar, weight: 6 },
      { arbitrary: malformed, weight: 1 },
      { arbitrary: tie('list'), weight: 1 },
      { arbitrary: tie('map'), weight: 1 },
    ),
    list: fc.array(tie('value'), { maxLength: 4 }).map((L) => ({ L })),
    map: fc.dictionary(name, tie('value'), { maxKeys: 4, noNullPrototype: true }).map((M) => ({ M })),
  }));
  return fc.dictionary(name, tree.value, { minKeys: 1, maxKeys: 6, noNullPrototype: true });
}
