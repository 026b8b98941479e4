import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isBase64, toBytes } from '../../../src/records/binary.js';
import { InvalidAttributeValueError } from '../../../src/records/errors.js';
import { thrown } from './fixtures.js';

const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64');

/** What Buffer's lenient decoder skips or stops at, and the URL-safe letters it takes. */
const NOISE = [' ', '\n', '$', '=', '*', '.', 'Ā', '🦑', '-', '_', '\u0000'];

describe('toBytes: base64 to bytes of their own', () => {
  it('decodes short and long binaries (table and native decoder) to a Uint8Array of exactly its bytes', () => {
    for (const size of [0, 1, 2, 3, 64, 65, 66, 67, 100, 600]) {
      const bytes = Uint8Array.from({ length: size }, (_, i) => (i * 37 + size) & 255);
      for (const text of [b64(bytes), b64(bytes).replace(/=+$/, '')]) {
        const out = toBytes(text);
        expect(out.constructor).toBe(Uint8Array);
        expect(out).toStrictEqual(bytes);
        expect(out.buffer.byteLength).toBe(size);
      }
    }
  });

  it('refuses what Buffer would skip in a long binary: a space, a newline, a `$`, an `=` inside, a code unit above 255', () => {
    const text = b64(Uint8Array.from({ length: 300 }, (_, i) => i & 255));
    for (const noise of [' ', '\n', '$', '=', 'Ā', '🦑']) {
      // Replacing a character keeps the length, and so the length rule, as it was.
      const bad = `${text.slice(0, 150)}${noise}${text.slice(150 + noise.length)}`;
      const error = thrown(() => toBytes(bad));
      expect(error, JSON.stringify(noise)).toBeInstanceOf(InvalidAttributeValueError);
      expect(error).toMatchObject({ reason: 'invalid-binary' });
    }
  });

  it('accepts exactly the texts isBase64 accepts, with the bytes Buffer decodes from them (property)', () => {
    const alphabet = fc.constantFrom(
      ...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.split(''),
    );
    const character = fc.oneof(
      { weight: 30, arbitrary: alphabet },
      { weight: 1, arbitrary: fc.constantFrom(...NOISE) },
    );
    // Both decoders: short texts (the table loop) and from 66 bytes on (Node's native decoder).
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 70 }),
      fc.uint8Array({ minLength: 66, maxLength: 400 }),
    );
    const text = fc.oneof(
      bytes.map(b64),
      fc.array(character, { maxLength: 120 }).map((cs) => cs.join('')),
      fc.array(character, { minLength: 84, maxLength: 400 }).map((cs) => cs.join('')),
      fc.tuple(bytes, fc.nat(), fc.constantFrom(...NOISE)).map(([raw, at, noise]) => {
        const t = b64(raw);
        if (t.length === 0) return noise;
        const i = at % t.length;
        return `${t.slice(0, i)}${noise}${t.slice(i + 1)}`;
      }),
    );
    fc.assert(
      fc.property(text, (t) => {
        if (!isBase64(t)) {
          expect(thrown(() => toBytes(t))).toBeInstanceOf(InvalidAttributeValueError);
          return;
        }
        const out = toBytes(t);
        expect(out.constructor).toBe(Uint8Array);
        expect(out).toStrictEqual(new Uint8Array(Buffer.from(t, 'base64')));
      }),
      { numRuns: 2_000 },
    );
  });
});
