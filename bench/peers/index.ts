import { createRawHandler, createHandler as handLoop } from './hand-loop.js';
import { createHandler as handLoopIsolated } from './hand-loop-isolated.js';
import { createHandler as middy } from './middy.js';
import { createHandler as powertools } from './powertools.js';
import { createDirectHandler, createHandler as tidewater } from './tidewater.js';
import type { BenchHandler, Collector, Workload } from './work.js';

export interface Peer {
  /** Stable id (file names, JSON). */
  id: string;
  /** Display name. */
  name: string;
  /** The handler for a workload; peers that must unmarshal do the same work in both. */
  create(collector: Collector, workload: Workload): BenchHandler;
  /** Shown only for these workloads (default: all). */
  only?: readonly Workload[];
  /** The module a cold-start bundle imports `createHandler`-style from, and the export name. */
  module: string;
  factory: string;
}

/** The four implementations compared, tidewater first. */
export const PEERS: readonly Peer[] = [
  {
    id: 'tidewater',
    name: 'tidewater',
    create: tidewater,
    module: 'tidewater.ts',
    factory: 'createHandler',
  },
  {
    id: 'powertools',
    name: 'Powertools batch',
    create: powertools,
    module: 'powertools.ts',
    factory: 'createHandler',
  },
  {
    id: 'middy',
    name: 'middy + event-normalizer',
    create: middy,
    module: 'middy.ts',
    factory: 'createHandler',
  },
  {
    id: 'hand-loop',
    name: 'hand-written loop',
    create: handLoop,
    module: 'hand-loop.ts',
    factory: 'createHandler',
  },
];

export type { BenchHandler, Collector, Processed, Workload } from './work.js';
export { newCollector, resetCollector, WORKLOADS } from './work.js';

/**
 * Extra rows in the throughput table: tidewater's parts without the batch engine, and the hand
 * loop's variants (raw maps; tidewater's binary isolation, issue 37's decision 1).
 */
export const VARIANTS: readonly Peer[] = [
  {
    id: 'tidewater-direct',
    name: 'tidewater parser + sinks, no engine',
    create: createDirectHandler,
    module: 'tidewater.ts',
    factory: 'createDirectHandler',
  },
  {
    id: 'hand-loop-raw',
    name: 'hand-written loop, images not unmarshalled',
    create: createRawHandler,
    module: 'hand-loop.ts',
    factory: 'createRawHandler',
    only: ['archive'],
  },
  {
    id: 'hand-loop-isolated',
    name: "hand-written loop, each image's binaries in memory of their own",
    create: handLoopIsolated,
    module: 'hand-loop-isolated.ts',
    factory: 'createHandler',
    only: ['materialize', 'binaries'],
  },
];
