/**
 * A seeded PRNG (mulberry32): the same seed gives the same events on every machine, so a
 * benchmark run is reproducible and peers are compared on identical input.
 */
export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [min, max]. */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  /** `length` characters from a fixed alphabet. */
  text(length: number): string;
  /** `length` random decimal digits, the first one non-zero. */
  digits(length: number): string;
  bytes(length: number): Uint8Array;
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ';

export function createRandom(seed: number): Random {
  if (!Number.isInteger(seed)) throw new TypeError(`seed must be an integer, got ${seed}`);
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1));
  return {
    next,
    int,
    pick: <T>(items: readonly T[]): T => items[int(0, items.length - 1)] as T,
    text(length) {
      let out = '';
      for (let i = 0; i < length; i++) out += ALPHABET[int(0, ALPHABET.length - 1)];
      return out;
    },
    digits(length) {
      let out = String(int(1, 9));
      for (let i = 1; i < length; i++) out += String(int(0, 9));
      return out;
    },
    bytes(length) {
      const out = new Uint8Array(length);
      for (let i = 0; i < length; i++) out[i] = int(0, 255);
      return out;
    },
  };
}
