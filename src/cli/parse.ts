import { InvalidArgumentError } from 'commander';

export function integer(text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0)
    throw new InvalidArgumentError(`expected a whole number, got ${text}`);
  return value;
}

/** A whole number from 1: a count, a size, a number of seconds. */
export function positive(text: string): number {
  const value = integer(text);
  if (value < 1) throw new InvalidArgumentError(`expected at least 1, got ${text}`);
  return value;
}

/** `path/to/module.handler` or `path/to/module#handler` → module path and export name. */
export function splitHandler(text: string): { module: string; exportName: string } {
  const at = text.includes('#') ? text.lastIndexOf('#') : text.lastIndexOf('.');
  if (at <= 0) throw new InvalidArgumentError(`expected <module>#<export> or <module>.<export>, got ${text}`);
  return { module: text.slice(0, at), exportName: text.slice(at + 1) };
}
