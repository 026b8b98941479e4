/**
 * The variants the unmarshall suite compares, in a module of their own so that each can be timed
 * in a fresh process (bench/lib/unmarshall-worker.ts): in one process the variants share JIT
 * feedback and heap state, which made the ratios swing by ±40% between runs.
 */
import { unmarshall as sdkUnmarshall } from '@aws-sdk/util-dynamodb';
import { createRecordParser } from '../../src/records/parse.js';
import type { LambdaStreamRecord } from '../../src/records/types.js';
import { map as handUnmarshall } from '../peers/hand-loop.js';

export interface Variant {
  /** Stable id: the suite finds its rows by it. */
  id: string;
  name: string;
  note: string;
  /** Processes every record once; returns a number derived from the output so none of it is dead code. */
  run(records: LambdaStreamRecord[]): number;
}

// Made once, as a Lambda makes its parser once per container. A parser made inside run() would be
// a new closure each round, and the forced gc() between rounds would free the last one, taking
// with it the optimized code that referenced it (--trace-deopt: "weak objects") — every round
// would then be timed cold.
const parseLazy = createRecordParser();
const parseValidating = createRecordParser({ validate: true });

function sdkKind(record: LambdaStreamRecord): string {
  if (record.eventName === 'INSERT') return 'insert';
  if (record.eventName === 'MODIFY') return 'modify';
  const ui = record.userIdentity;
  return ui?.type === 'Service' && ui.principalId === 'dynamodb.amazonaws.com' ? 'ttl-delete' : 'user-delete';
}

function countKeys(item: object | undefined): number {
  let n = 0;
  if (item !== undefined) for (const _ in item) n++;
  return n;
}

export const variants: Variant[] = [
  {
    id: 'tidewater',
    name: 'tidewater (parse + classify + keys + both images)',
    note: 'each record parsed (createRecordParser, what parseStreamEvent runs per record), then its keys, newImage and oldImage read (full unmarshall, exact numbers, binaries decoded to Uint8Array — those over 64 bytes as views of one buffer per image) and dropped, as the util-dynamodb variants drop theirs — holding all 20,000 parsed records at once would time the garbage collector, not unmarshall',
    run(records) {
      const parse = parseLazy;
      let acc = 0;
      for (const raw of records) {
        const r = parse(raw);
        acc += r.kind.length + countKeys(r.keys) + countKeys(r.newImage) + countKeys(r.oldImage);
      }
      return acc;
    },
  },
  {
    id: 'hand-loop',
    name: "hand-written loop's minimal unmarshaller (+ hand classify)",
    note: "the throughput suite's hand-written loop (bench/peers/hand-loop.ts) without its loop: its ~25-line unmarshaller on Keys, NewImage and OldImage per record — numbers of ≤ 15 characters `Number(text)`, longer ones left as strings (not exact), binaries `Buffer.from(base64)` (views of Node's shared pool), sets as Set, no validation of the type key",
    run(records) {
      let acc = 0;
      for (const r of records) {
        const d = r.dynamodb;
        acc += sdkKind(r).length + countKeys(handUnmarshall(d.Keys as never));
        if (d.NewImage) acc += countKeys(handUnmarshall(d.NewImage as never));
        if (d.OldImage) acc += countKeys(handUnmarshall(d.OldImage as never));
      }
      return acc;
    },
  },
  {
    id: 'util-dynamodb',
    name: '@aws-sdk/util-dynamodb unmarshall (+ hand classify)',
    note: 'unmarshall of Keys, NewImage and OldImage per record, eventName/userIdentity checked by hand; numbers lossy-or-bigint, binaries left as base64 strings',
    run(records) {
      let acc = 0;
      for (const r of records) {
        const d = r.dynamodb;
        acc += sdkKind(r).length + countKeys(sdkUnmarshall(d.Keys as never));
        if (d.NewImage) acc += countKeys(sdkUnmarshall(d.NewImage as never));
        if (d.OldImage) acc += countKeys(sdkUnmarshall(d.OldImage as never));
      }
      return acc;
    },
  },
  {
    id: 'util-dynamodb-exact',
    name: '@aws-sdk/util-dynamodb unmarshall, wrapNumbers (exact)',
    note: "as above with wrapNumbers: true, util-dynamodb's only mode that keeps every number exact",
    run(records) {
      let acc = 0;
      for (const r of records) {
        const d = r.dynamodb;
        acc += sdkKind(r).length + countKeys(sdkUnmarshall(d.Keys as never, { wrapNumbers: true }));
        if (d.NewImage) acc += countKeys(sdkUnmarshall(d.NewImage as never, { wrapNumbers: true }));
        if (d.OldImage) acc += countKeys(sdkUnmarshall(d.OldImage as never, { wrapNumbers: true }));
      }
      return acc;
    },
  },
  {
    id: 'tidewater-validate',
    name: 'tidewater parse + classify + validate (opt-in)',
    note: 'createRecordParser({ validate: true }) per record and kind: keys and images checked structurally as unmarshall would (same errors), not unmarshalled — what the pipeline pays per record with `parse: { validate: true }`',
    run(records) {
      const parse = parseValidating;
      let acc = 0;
      for (const raw of records) {
        const r = parse(raw);
        acc += r.kind.length + r.sequenceNumber.length;
      }
      return acc;
    },
  },
  {
    id: 'tidewater-lazy',
    name: 'tidewater parse + classify only (lazy)',
    note: 'each record parsed and classified; images never read, so never unmarshalled (what a filter-then-route handler pays for records it drops)',
    run(records) {
      let acc = 0;
      const parse = parseLazy;
      for (const raw of records) {
        const r = parse(raw);
        acc += r.kind.length + r.sequenceNumber.length;
      }
      return acc;
    },
  },
];
