import { InvalidOptionsError } from '../core/errors.js';
import { defineOptions } from '../core/options.js';
import type { Item } from '../records/types.js';
import type { ImagesChecked, ItemSchema, ValidatedSchema } from './config.js';
import { isMarked } from './marked.js';
import { type CompiledConfig, type CompiledSchema, HANDLER_BIT } from './plan.js';
import type { StandardSchemaV1 } from './standard-schema.js';
import { validateImages } from './validate-images.js';
import { VALIDATED } from './validated-key.js';

// Item schemas are opt-in, as matching() is for the filter compiler and kinesisSource() for the
// Kinesis stages: only a handler that calls validated() links the validation stage (and its
// errors). A handler whose routes check no image, an archive of the raw DynamoDB JSON, carries none.

/** An item schema and which images it must accept, as a route or the kind handlers give it. */
export interface SchemaUse {
  readonly schema: ItemSchema;
  readonly images: ImagesChecked;
}

/** What validated() links: the stage, and how the pipeline's schemas are compiled for it. */
export interface ValidationStage {
  readonly schema: ItemSchema;
  readonly validate: typeof validateImages;
  readonly compile: typeof compileSchemas;
  readonly checkSameUse: typeof checkSameUse;
}

/** What validated() returns, its stage's type known here. */
interface ValidatedWithStage<T extends object = Item> extends ValidatedSchema<T> {
  readonly [VALIDATED]: ValidationStage;
}

/** A Standard Schema v1. Checked at configuration time, so a zod 3.23 schema (no `~standard`) fails there. */
function isStandardSchema(value: unknown): value is ItemSchema {
  const props = (value as { '~standard'?: unknown } | null | undefined)?.['~standard'];
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof props === 'object' &&
    props !== null &&
    (props as { version?: unknown }).version === 1 &&
    typeof (props as { validate?: unknown }).validate === 'function'
  );
}

const readArguments = /* @__PURE__ */ defineOptions<{ schema: ItemSchema }>()('validated', {
  schema: {
    kind: 'custom',
    expected:
      'a Standard Schema v1 (a zod ≥ 3.24, valibot ≥ 1 or arktype schema: an object with ~standard.validate)',
    check: isStandardSchema,
    required: true,
  },
});

/**
 * An item schema for a route's `item` or `handlers.item`: `route({ when: 'insert', item:
 * validated(orderSchema), to })`. Any Standard Schema (zod, valibot, arktype…); the route's sinks
 * (or the kind handlers) receive its output as `newImage` / `oldImage`, and a record whose image
 * fails is dead-lettered (`invalid-image`). Wrapping links the validation stage into the handler;
 * a bare schema given as `item` is refused naming this call.
 */
export function validated<T extends object>(schema: StandardSchemaV1<unknown, T>): ValidatedSchema<T> {
  if (isValidated(schema)) return schema as unknown as ValidatedSchema<T>;
  readArguments({ schema });
  const stage: ValidationStage = {
    schema: schema as ItemSchema,
    validate: validateImages,
    compile: compileSchemas,
    checkSameUse,
  };
  const wrapped: ValidatedWithStage<T> = {
    // Read when asked, not copied: a library may build `~standard` in a getter.
    get '~standard'() {
      return schema['~standard'];
    },
    [VALIDATED]: stage,
  };
  return wrapped;
}

/** @internal Whether `value` was made by validated(). */
export function isValidated(value: unknown): value is ValidatedSchema {
  return isMarked(value, VALIDATED);
}

/** @internal The stage a validated() schema carries. */
export function validationStageOf(value: ValidatedSchema): ValidationStage {
  return (value as ValidatedWithStage)[VALIDATED];
}

/**
 * Refuses a sink reached by two routes whose uses differ (`what`: `routes[1]: sink <name>`): a
 * sink gets one batch per invocation, and records validated by one schema and records validated
 * by another (or not at all) would be indistinguishable in it. In the compiler's message shape.
 */
function checkSameUse(a: SchemaUse | null, b: SchemaUse | null, what: string): void {
  if (a !== null && b !== null && a.schema === b.schema && a.images === b.images) return;
  throw new InvalidOptionsError(
    `pipeline: ${what} is reached by routes with different item schemas ` +
      "(or with and without one, or other 'images'); a sink takes one: give its routes the same schema (a union for several entities)",
  );
}

/**
 * The distinct schemas, each with the mask bits it validates for; -1 where none applies. `labels`:
 * per sink, what a dead-letter entry names (the sink's name).
 */
function compileSchemas(
  labels: readonly string[],
  perSink: readonly (SchemaUse | null)[],
  handlerSchema: SchemaUse | null,
): Pick<CompiledConfig, 'schemas' | 'sinkSchemas' | 'handlerSchema'> {
  const found: SchemaUse[] = [];
  const masks: number[] = [];
  const names: string[][] = [];
  const indexOf = (use: SchemaUse, bit: number, label: string): number => {
    let j = found.findIndex((f) => f.schema === use.schema && f.images === use.images);
    if (j === -1) {
      j = found.push(use) - 1;
      masks[j] = 0;
      names[j] = [];
    }
    masks[j]! |= bit;
    names[j]!.push(label);
    return j;
  };
  const sinkSchemas = perSink.map((use, s) => (use === null ? -1 : indexOf(use, 1 << s, labels[s]!)));
  const handler = handlerSchema === null ? -1 : indexOf(handlerSchema, HANDLER_BIT, 'handlers');
  const schemas = found.map(
    ({ schema, images }, j): CompiledSchema => ({
      schema,
      props: schema['~standard'],
      vendor: String(schema['~standard'].vendor),
      mask: masks[j]!,
      label: names[j]!.join(', '),
      images,
    }),
  );
  return { schemas, sinkSchemas, handlerSchema: handler };
}
