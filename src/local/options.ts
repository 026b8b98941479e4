import { InvalidOptionsError } from '../records/index.js';

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
