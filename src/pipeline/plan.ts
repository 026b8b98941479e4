// The compiled plan: what compile.ts makes of a PipelineConfig and the per-record path reads.
import type { RetryPolicy } from '../core/backoff.js';
import type { RecordParser } from '../records/parse.js';
import { type ClassifiedRecord, type Item, RECORD_KINDS, type RecordKind } from '../records/types.js';
import type { DeadLetterSink, Sink } from '../sinks/types.js';
import type {
  HandlerContext,
  ImagesChecked,
  ItemSchema,
  PipelineConfig,
  PipelineLogger,
  UnroutedPolicy,
} from './config.js';
import type { KinesisSource } from './kinesis-source.js';
import type { CompiledMetrics } from './metrics.js';
import type { StandardSchemaV1 } from './standard-schema.js';

export const KINDS: readonly RecordKind[] = RECORD_KINDS;
/** Bit per kind, so a kind route matches with one AND. */
export const KIND_BIT: Readonly<Record<RecordKind, number>> = {
  insert: 1,
  modify: 2,
  'user-delete': 4,
  'ttl-delete': 8,
};
/** Routing uses one 32-bit mask per record: a bit per sink, and HANDLER_BIT. */
export const MAX_SINKS = 31;
/** In a record's routing mask: its kind handler has yet to run. Above every sink's bit. */
export const HANDLER_BIT = 1 << MAX_SINKS;
/** Every sink's bit. */
export const SINK_BITS = ~HANDLER_BIT;

/** One route, ready for the hot path: either a kind mask or a test function, and the sinks' bits. */
export interface CompiledRoute {
  readonly name: string;
  readonly kindMask: number;
  readonly test: ((record: ClassifiedRecord) => boolean) | undefined;
  readonly sinkMask: number;
}

export interface CompiledConfig {
  readonly routes: readonly CompiledRoute[];
  /**
   * The validation stage, linked by validated() (validate-images.ts); undefined without an item
   * schema. Its ledger is typed `never` here: plan.ts sits below ledger.ts, which imports it.
   */
  readonly validate: ((ledger: never, config: CompiledConfig) => Promise<void> | undefined) | undefined;
  /** The distinct item schemas of routes and handlers; empty when none is given (no validation stage). */
  readonly schemas: readonly CompiledSchema[];
  /** Per sink, the index into `schemas` of the schema its records are validated with, or -1. */
  readonly sinkSchemas: readonly number[];
  /** The index into `schemas` of the kind handlers' schema, or -1. */
  readonly handlerSchema: number;
  /**
   * Per kind, the routing mask its kind routes and handler give every record of that kind: the
   * per-record path only evaluates `predicateRoutes` on top (kind routes have no side effects, so
   * folding them here changes nothing a predicate could see).
   */
  readonly kindMasks: Readonly<Record<RecordKind, number>>;
  /** The routes with a predicate, in config order. */
  readonly predicateRoutes: readonly CompiledRoute[];
  readonly sinks: readonly Sink[];
  /**
   * The bits of the sinks that take only checked images (Sink.checkedImages): a record routed to
   * one has its keys and images checked at routing. 0 when parsing already checks them (`parse.validate` or `eager`).
   */
  readonly checkedSinks: number;
  /** Indexed by KIND_BIT position order of KINDS. */
  readonly handlers: readonly (
    | ((record: ClassifiedRecord, context: HandlerContext) => unknown)
    | undefined
  )[];
  readonly handledKinds: number;
  readonly perKey: boolean;
  readonly concurrency: number;
  readonly deadLetter: DeadLetterSink | undefined;
  /** RETRY_POLICIES.sinkWrite with the `retry` option's values: core/backoff's schedule. */
  readonly retry: RetryPolicy;
  readonly retryable: ((error: unknown) => boolean) | undefined;
  readonly maxRecordAgeMs: number;
  readonly deadlineMarginMs: number;
  /**
   * The TTL health check ttlHealth() linked, bound to its attribute; undefined without one. Its
   * ledger is typed `never` here, as `validate`'s.
   */
  readonly ttlHealth: ((ledger: never, record: ClassifiedRecord, nowSeconds: number) => void) | undefined;
  readonly logImages: boolean;
  readonly logger: PipelineLogger;
  readonly metrics: CompiledMetrics | undefined;
  readonly onUnrouted: UnroutedPolicy;
  readonly parse: RecordParser;
  /** The `parse` options the parser was made with: a backfill makes its own parser from them. */
  readonly parseOptions: PipelineConfig['parse'];
  /** The Kinesis stage (its parser made with the same parse options); undefined for a DynamoDB stream. */
  readonly kinesis: { readonly source: KinesisSource; readonly parse: RecordParser } | undefined;
  readonly clock: () => number;
}

/** One item schema, ready for the validation stage. */
export interface CompiledSchema {
  readonly schema: ItemSchema;
  /** `~standard`, read once: a library may build it in a getter. */
  readonly props: StandardSchemaV1.Props<unknown, Item>;
  /** `~standard.vendor`, for errors: zod, valibot… */
  readonly vendor: string;
  /** The routing-mask bits (sinks, HANDLER_BIT) whose records this schema validates. */
  readonly mask: number;
  /** What a dead-letter entry names as the sink: the sinks' names, `handlers` for the kind handlers. */
  readonly label: string;
  /** 'new': a modify's OldImage that fails is left out (undefined), not a reason to give up. */
  readonly images: ImagesChecked;
}
