import { InvalidArgumentError } from 'commander';

export function integer(text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0)
    throw new InvalidArgumentError(`expected a whole number, got ${text}`);
  return value;
}

/** `path/to/module.handler` or `path/to/module#handler` → module path and export name. */
export function splitHandler(text: string): { module: string; exportName: string } {
  const at = text.includes('#') ? text.lastIndexOf('#') : text.lastIndexOf('.');
  if (at <= 0) throw new InvalidArgumentError(`expected <module>#<export> or <module>.<export>, got ${text}`);
  return { module: text.slice(0, at), exportName: text.slice(at + 1) };
}
