import { InvalidOptionsError } from './errors.js';

/**
 * Rejects unknown option keys and a non-object options argument, so a typo
 * (`{ number: 'string' }`) fails at configuration time instead of silently doing the default.
 */
export function assertOptions(options: unknown, allowed: readonly string[], where: string): void {
  if (options === undefined) return;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new InvalidOptionsError(`${where}: options must be an object, got ${describe(options)}`);
  }
  for (const key in options) {
    if (!allowed.includes(key)) {
      throw new InvalidOptionsError(
        `${where}: unknown option '${key}' (known: ${allowed.length ? allowed.join(', ') : 'none'})`,
      );
    }
  }
}

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (value instanceof Uint8Array) return 'a Uint8Array';
  if (typeof value === 'object') return value.constructor?.name ? `a ${value.constructor.name}` : 'an object';
  if (typeof value === 'string')
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  return `${typeof value} ${String(value)}`;
}
