import fc from 'fast-check';
import type { AttributeValue } from '../../../src/records/types.js';

/** A DynamoDB number of up to 38 digits, as text. */
export const number38 = fc.bigInt({ min: -(10n ** 38n) + 1n, max: 10n ** 38n - 1n }).map((n) => n.toString());

const leaf: fc.Arbitrary<AttributeValue> = fc.oneof(
  fc.string().map((S) => ({ S })),
  number38.map((N) => ({ N })),
  fc.uint8Array({ minLength: 1, maxLength: 40 }).map((b) => ({ B: Buffer.from(b).toString('base64') })),
  fc.boolean().map((BOOL) => ({ BOOL })),
  fc.constant({ NULL: true as const }),
  fc.uniqueArray(fc.string(), { minLength: 1, maxLength: 4 }).map((SS) => ({ SS })),
  fc.uniqueArray(number38, { minLength: 1, maxLength: 4 }).map((NS) => ({ NS })),
  fc
    .uniqueArray(fc.uint8Array({ minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 3 })
    .map((bs) => ({ BS: [...new Set(bs.map((b) => Buffer.from(b).toString('base64')))] })),
);

/** Any attribute value in Lambda's shape (binary as base64): 38-digit numbers, sets, nested lists and maps. */
export const attributeValue = fc.letrec<{ v: AttributeValue }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    leaf,
    fc.array(tie('v'), { maxLength: 3 }).map((L) => ({ L })),
    fc.dictionary(fc.string({ minLength: 1 }), tie('v'), { maxKeys: 3 }).map((M) => ({ M })),
  ),
})).v;
