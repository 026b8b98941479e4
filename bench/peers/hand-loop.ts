/**
 * The practical ceiling: a hand-written loop with a minimal unmarshaller, what a careful user
 * writes with no library. Numbers: safe integers/short decimals as `number`, anything longer kept as
 * its string (so 38 digits never throw); binary decoded from base64; sets as Set.
 */
import { gzipSync } from 'node:zlib';
import type { RecordKind } from '../../src/records/types.js';
import { type BenchHandler, type Collector, TTL_PRINCIPAL, type Workload } from './work.js';

export type AV = Record<string, unknown>;

export function num(text: string): number | string {
  // 15 significant digits always round-trip through a double.
  return text.length <= 15 ? Number(text) : text;
}

function value(av: AV): unknown {
  if (av.S !== undefined) return av.S;
  if (av.N !== undefined) return num(av.N as string);
  if (av.BOOL !== undefined) return av.BOOL;
  if (av.NULL !== undefined) return null;
  if (av.M !== undefined) return map(av.M as Record<string, AV>);
  if (av.L !== undefined) {
    const list = av.L as AV[];
    const out = new Array(list.length);
    for (let i = 0; i < list.length; i++) out[i] = value(list[i] as AV);
    return out;
  }
  if (av.B !== undefined) return Buffer.from(av.B as string, 'base64');
  if (av.SS !== undefined) return new Set(av.SS as string[]);
  if (av.NS !== undefined) return new Set((av.NS as string[]).map(num));
  if (av.BS !== undefined) return new Set((av.BS as string[]).map((b) => Buffer.from(b, 'base64')));
  throw new TypeError(`unknown attribute value ${Object.keys(av).join(',')}`);
}

/** The loop's minimal unmarshaller, also timed alone by the unmarshall suite. */
export function map(m: Record<string, AV> | undefined): Record<string, unknown> | undefined {
  if (m === undefined) return undefined;
  const out: Record<string, unknown> = {};
  for (const key in m) out[key] = value(m[key] as AV);
  return out;
}

function raw(m: Record<string, AV> | undefined): Record<string, AV> | undefined {
  return m;
}

interface RawRecord {
  eventName: string;
  userIdentity?: { type?: string; principalId?: string };
  dynamodb: {
    Keys: Record<string, AV>;
    NewImage?: Record<string, AV>;
    OldImage?: Record<string, AV>;
    SequenceNumber: string;
  };
}

/**
 * The loop. `unmarshal: false` is the same loop handing out the raw DynamoDB JSON maps — not
 * what issue 9 compares against (its peers unmarshal), shown as the floor for a job that never
 * reads an image.
 */
export function createHandler(collector: Collector, _workload?: Workload, unmarshal = true): BenchHandler {
  return loopHandler(collector, unmarshal ? map : raw);
}

/** The loop with `images` as its unmarshaller (the isolated loop, hand-loop-isolated.ts, brings its own). */
export function loopHandler(
  collector: Collector,
  images: (m: Record<string, AV> | undefined) => unknown,
): BenchHandler {
  return async (event) => {
    const records = (event as { Records: RawRecord[] }).Records;
    const failures: { itemIdentifier: string }[] = [];
    let lines = '';
    for (const record of records) {
      const d = record.dynamodb;
      try {
        let kind: RecordKind;
        if (record.eventName === 'INSERT') kind = 'insert';
        else if (record.eventName === 'MODIFY') kind = 'modify';
        else if (
          record.userIdentity?.type === 'Service' &&
          record.userIdentity.principalId === TTL_PRINCIPAL
        ) {
          kind = 'ttl-delete';
          lines += `${JSON.stringify(record)}\n`;
        } else kind = 'user-delete';
        collector.items.push({
          kind,
          sequenceNumber: d.SequenceNumber,
          keys: images(d.Keys),
          newImage: images(d.NewImage),
          oldImage: images(d.OldImage),
        });
      } catch {
        // Ordered stream: everything from the first failure on is retried by Lambda.
        failures.push({ itemIdentifier: d.SequenceNumber });
        break;
      }
    }
    if (lines !== '') collector.objects.push(gzipSync(lines));
    return { batchItemFailures: failures };
  };
}

/** The same loop without unmarshalling: the raw DynamoDB JSON maps are handed out as they came. */
export function createRawHandler(collector: Collector): BenchHandler {
  return createHandler(collector, 'archive', false);
}
