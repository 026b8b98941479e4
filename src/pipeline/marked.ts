/**
 * Whether `value` was made by the opt-in call that marks what it makes with `key` (validated(),
 * sinkTracer(), kinesisSource(), ttlHealth()): the one test the options' readers share.
 */
export function isMarked(value: unknown, key: symbol): boolean {
  return value !== null && typeof value === 'object' && key in value;
}
