import { parsePattern } from './compile.js';
import { isStringTypedAttributePath } from './string-typed.js';
import type { FilterPattern } from './types.js';

/**
 * What Lambda accepts in a filter pattern but can never work on a DynamoDB stream record: a
 * `numeric` condition, or a number / boolean / null literal, under an `N` (or `S`, `B`, set) type
 * key — Lambda delivers those values as JSON strings and event-ruler does not compare across
 * JSON types, so the filter drops every record — and a numeric `anything-but` there, which
 * excludes nothing. The filter builder refuses these outright; a raw pattern is valid JSON that
 * Lambda takes, so it gets these warnings instead. One message per condition, naming its path.
 */
export function patternWarnings(pattern: FilterPattern | string): string[] {
  const warnings: string[] = [];
  let parsed: Record<string, unknown>;
  try {
    parsed = parsePattern(pattern);
  } catch {
    return warnings; // not a pattern at all: compiling it reports that
  }
  walk(parsed, [], warnings);
  return warnings;
}

/** Where warnings go by default: Node's process warnings, with a code to filter them by. */
export function emitFilterWarning(message: string): void {
  process.emitWarning(message, { code: 'TIDEWATER_FILTER_NEVER_MATCHES' });
}

function walk(node: unknown, path: readonly string[], out: string[]): void {
  if (Array.isArray(node)) {
    // `$or` holds alternative sub-patterns at the same place in the record.
    if (path[path.length - 1] === '$or') {
      for (const alternative of node) walk(alternative, path.slice(0, -1), out);
      return;
    }
    if (!isStringTypedAttributePath(path)) return;
    node.forEach((condition, i) => {
      check(condition, `${path.join('.')}[${i}]`, out);
    });
    return;
  }
  if (node !== null && typeof node === 'object')
    for (const [key, value] of Object.entries(node)) walk(value, [...path, key], out);
}

function check(condition: unknown, at: string, out: string[]): void {
  const type = at.slice(0, at.lastIndexOf('[')).split('.').pop();
  if (condition === null || typeof condition === 'number' || typeof condition === 'boolean') {
    out.push(
      `${at}: ${JSON.stringify(condition)} never matches: Lambda delivers ${type} values as JSON strings ` +
        `({"${type}": "42"}), so compare text ("42")`,
    );
    return;
  }
  if (typeof condition !== 'object') return;
  if ('numeric' in condition) {
    out.push(
      `${at}: numeric never matches a ${type} value: Lambda delivers it as a JSON string ({"${type}": "42"}) ` +
        'and numeric compares JSON numbers only, so this filter drops every record. Match the text, or ' +
        'filter in the handler',
    );
  }
  const excluded = (condition as { 'anything-but'?: unknown })['anything-but'];
  if (
    typeof excluded === 'number' ||
    (Array.isArray(excluded) && excluded.some((v) => typeof v === 'number'))
  ) {
    out.push(
      `${at}: a numeric anything-but excludes nothing from a ${type} value (a JSON string), so every ` +
        'record passes; list the excluded values as text',
    );
  }
}
