import { InvalidOptionsError } from '../records/index.js';

/** Fails loudly on an unknown option key, so a typo never silently means "default". */
export function assertKnownKeys(
  options: object | undefined,
  allowed: readonly string[],
  where: string,
): void {
  if (options === undefined) return;
  if (options === null || typeof options !== 'object')
    throw new InvalidOptionsError(`${where}: options must be an object`);
  for (const key of Object.keys(options)) {
    if (!allowed.includes(key)) {
      throw new InvalidOptionsError(`${where}: unknown option '${key}' (known: ${allowed.join(', ')})`);
    }
  }
}

export function assertIntegerIn(
  value: number | undefined,
  min: number,
  max: number,
  name: string,
  where: string,
  also?: number,
): void {
  if (value === undefined) return;
  if (!Number.isInteger(value) || ((value < min || value > max) && value !== also)) {
    const extra = also === undefined ? '' : ` or ${also}`;
    throw new InvalidOptionsError(
      `${where}: ${name} must be an integer from ${min} to ${max}${extra}, got ${String(value)}`,
    );
  }
}
