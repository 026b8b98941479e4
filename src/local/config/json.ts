import { readFileSync, statSync } from 'node:fs';
import { MAX_NESTING_DEPTH } from './nesting.js';

/**
 * The largest JSON document read (a cdk.out's manifest, template or asset manifest; a variable
 * file), in bytes. CloudFormation takes a template of at most 1 MB; synthesized JSON is indented,
 * so ten times that is room for any real one and bounds what a hostile file costs.
 */
export const MAX_JSON_BYTES = 10 * 1024 * 1024;

/**
 * A JSON file parsed, refused (an Error whose message says why; the caller names the file in its
 * own error) when it is larger than MAX_JSON_BYTES, is not JSON, or nests deeper than
 * MAX_NESTING_DEPTH. The depth is measured on the text before parsing: JSON.parse itself takes a
 * 200,000-deep list, and every walker after it would overflow the stack.
 */
export function readJsonFile(file: string): unknown {
  return parseJsonText(readBoundedText(file, MAX_JSON_BYTES));
}

/**
 * A config file's text, refused (an Error saying why) unless it is a regular file of at most
 * `maxBytes`: a device or a FIFO reports size 0 and then reads without end (`/dev/zero`) or
 * blocks the process (a FIFO), so its size alone bounds nothing.
 */
export function readBoundedText(file: string, maxBytes: number): string {
  checkBoundedFile(statSync(file), maxBytes);
  return readFileSync(file, 'utf8');
}

/** The check readBoundedText makes, for a caller that stats the file itself. */
export function checkBoundedFile(stats: { isFile(): boolean; size: number }, maxBytes: number): void {
  if (!stats.isFile()) throw new Error('is not a regular file');
  if (stats.size > maxBytes) throw new Error(`is larger than ${maxBytes} bytes (${stats.size})`);
}

/** JSON text parsed as readJsonFile does, depth checked first. */
export function parseJsonText(text: string): unknown {
  const past = jsonDepthPast(text, MAX_NESTING_DEPTH);
  if (past !== undefined)
    throw new Error(`nests deeper than ${MAX_NESTING_DEPTH} levels (at character ${past})`);
  return JSON.parse(text);
}

/** The offset where the text's brackets first nest past `max`, strings skipped; undefined if never. */
function jsonDepthPast(text: string, max: number): number | undefined {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return i;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return undefined;
}
