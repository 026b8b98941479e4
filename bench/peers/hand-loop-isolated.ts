/**
 * The hand-written loop with tidewater's isolation (issue 37, decision 1): the same unmarshaller,
 * but an image's binaries are not `Buffer.from` slices of Node's shared pool (whose `.buffer`
 * reaches any other Buffer of the process, another tenant's item included). Each image's binaries
 * are decoded, after its walk, into one `Buffer.allocUnsafeSlow` sized for exactly them, natively
 * (`buf.write(text, offset, 'base64')`), and handed out as `subarray` views: an image's bytes share
 * memory only with that image's other binaries. tidewater keeps the same promise for binaries over
 * 64 bytes and gives each smaller one memory of its own; this loop puts the small ones in the
 * image's memory too (one allocation per image, the cheapest way to keep the promise), so it is
 * the reference for what the isolation costs, not a lower bound on tidewater's work.
 */
import { type AV, loopHandler, num } from './hand-loop.js';
import type { BenchHandler, Collector, Workload } from './work.js';

/**
 * One image's walk: binaries met are kept as (text, container, slot, bytes) and placed by
 * `resolve` once the image's size is known. A set of binaries is placed whole (its members' texts
 * as the first entry), as `new Set` needs its members when built.
 */
interface Walk {
  pending: unknown[];
  bytes: number;
}

function value(av: AV, walk: Walk, container: unknown, slot: string | number): unknown {
  if (av.S !== undefined) return av.S;
  if (av.N !== undefined) return num(av.N as string);
  if (av.BOOL !== undefined) return av.BOOL;
  if (av.NULL !== undefined) return null;
  if (av.M !== undefined) return mapInto(av.M as Record<string, AV>, walk);
  if (av.L !== undefined) {
    const list = av.L as AV[];
    const out = new Array(list.length);
    for (let i = 0; i < list.length; i++) out[i] = value(list[i] as AV, walk, out, i);
    return out;
  }
  if (av.B !== undefined) {
    const text = av.B as string;
    const bytes = Buffer.byteLength(text, 'base64');
    walk.pending.push(text, container, slot, bytes);
    walk.bytes += bytes;
    return undefined;
  }
  if (av.SS !== undefined) return new Set(av.SS as string[]);
  if (av.NS !== undefined) return new Set((av.NS as string[]).map(num));
  if (av.BS !== undefined) {
    const texts = av.BS as string[];
    let bytes = 0;
    for (const t of texts) bytes += Buffer.byteLength(t, 'base64');
    walk.pending.push(texts, container, slot, -bytes);
    walk.bytes += bytes;
    return undefined;
  }
  throw new TypeError(`unknown attribute value ${Object.keys(av).join(',')}`);
}

function mapInto(m: Record<string, AV>, walk: Walk): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key in m) out[key] = value(m[key] as AV, walk, out, key);
  return out;
}

/** The image's binaries into one memory of its own, each in its place. */
function resolve(walk: Walk): void {
  const memory = Buffer.allocUnsafeSlow(walk.bytes);
  const pending = walk.pending;
  let offset = 0;
  for (let i = 0; i < pending.length; i += 4) {
    const container = pending[i + 1] as Record<string | number, unknown>;
    const slot = pending[i + 2] as string | number;
    const bytes = pending[i + 3] as number;
    if (bytes >= 0) {
      memory.write(pending[i] as string, offset, bytes, 'base64');
      container[slot] = memory.subarray(offset, offset + bytes);
      offset += bytes;
    } else {
      const set = new Set<Buffer>();
      for (const text of pending[i] as string[]) {
        const n = memory.write(text, offset, 'base64');
        set.add(memory.subarray(offset, offset + n));
        offset += n;
      }
      container[slot] = set;
    }
  }
}

/** The isolated loop's unmarshaller, also timed alone by the binaries suite. */
export function map(m: Record<string, AV> | undefined): Record<string, unknown> | undefined {
  if (m === undefined) return undefined;
  const walk: Walk = { pending: [], bytes: 0 };
  const out = mapInto(m, walk);
  if (walk.pending.length > 0) resolve(walk);
  return out;
}

export function createHandler(collector: Collector, _workload?: Workload): BenchHandler {
  return loopHandler(collector, map);
}
