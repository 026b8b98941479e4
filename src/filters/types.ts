/**
 * Filter patterns as Lambda event source mappings take them (event-ruler syntax). Plain JSON
 * objects: the builder produces them, `compilePattern` evaluates them, the exporters serialize them.
 */

/** A literal a pattern can match exactly. */
export type FilterScalar = string | number | boolean | null;

/** `{ "prefix": "x" }` or `{ "prefix": { "equals-ignore-case": "x" } }` (same shape for suffix). */
export type AffixOperand = string | { readonly 'equals-ignore-case': string };

export type AnythingButOperand =
  | string
  | number
  | readonly string[]
  | readonly number[]
  | { readonly prefix: string | readonly string[] }
  | { readonly suffix: string | readonly string[] }
  | { readonly 'equals-ignore-case': string | readonly string[] }
  | { readonly wildcard: string | readonly string[] };

export type NumericOperand =
  | readonly ['=', number]
  | readonly ['<' | '<=' | '>' | '>=', number]
  | readonly ['>' | '>=', number, '<' | '<=', number];

/** One operator object inside a field's condition list. */
export type MatchExpression =
  | { readonly prefix: AffixOperand }
  | { readonly suffix: AffixOperand }
  | { readonly 'equals-ignore-case': string }
  | { readonly 'anything-but': AnythingButOperand }
  | { readonly numeric: NumericOperand }
  | { readonly exists: boolean }
  | { readonly wildcard: string }
  | { readonly cidr: string }
  | { readonly exactly: string };

/** One element of a field's condition list; the list matches when any element does. */
export type FilterCondition = FilterScalar | MatchExpression;

/**
 * A pattern: fields AND, each field either a condition list (OR) or a nested pattern; `$or` holds
 * two or more alternative sub-patterns evaluated at the same level.
 */
export interface FilterPattern {
  readonly [field: string]: readonly FilterCondition[] | FilterPattern | readonly FilterPattern[];
}

/** A compiled pattern: true when Lambda would deliver the record to the function. */
export type EventMatcher = (event: unknown) => boolean;

/** The CloudFormation / Lambda API shape of an event source mapping's filters. */
export interface FilterCriteria {
  Filters: { Pattern: string }[];
}

/** The attribute names of object type T (every member's, for a union); never for anything else. */
type KeysOf<T> = T extends object ? Extract<keyof T, string> : never;

/**
 * The attribute names a typed filter accepts for item type T: T's field names, or any string when
 * T is not a known object type (`Item`, `unknown`, a record of any keys).
 */
export type AttributeName<T> = unknown extends T
  ? string
  : string extends KeysOf<NonNullable<T>>
    ? string
    : [KeysOf<NonNullable<T>>] extends [never]
      ? string
      : KeysOf<NonNullable<T>>;

/** The type of field N of T (of whichever member of a union has it); unknown when T is not typed. */
export type FieldOf<T, N extends string> =
  NonNullable<T> extends infer O
    ? O extends object
      ? N extends keyof O
        ? O[N]
        : never
      : unknown
    : unknown;

/** The element type of a list-typed field; unknown when not typed. */
export type ElementOf<V> = NonNullable<V> extends readonly (infer E)[] ? E : unknown;

type Conditions = readonly FilterCondition[];

/**
 * Conditions on one attribute as Lambda delivers it: under its DynamoDB type key. `M` holds the
 * map's members (checked against V's fields), `L` a pattern every list element is tried against.
 */
export interface AttributePattern<V = unknown> {
  readonly S?: Conditions;
  readonly N?: Conditions;
  readonly B?: Conditions;
  readonly BOOL?: Conditions;
  readonly NULL?: Conditions;
  readonly SS?: Conditions;
  readonly NS?: Conditions;
  readonly BS?: Conditions;
  readonly M?: ImagePattern<V>;
  readonly L?: AttributePattern<ElementOf<V>>;
}

/** An image (Keys, NewImage, OldImage) in a typed pattern: only T's attribute names are accepted. */
export type ImagePattern<T> = {
  readonly [K in AttributeName<T>]?: AttributePattern<FieldOf<T, K>>;
} & { readonly $or?: readonly ImagePattern<T>[] };

/**
 * A filter pattern typed by the item the table holds: `matchesPattern<Order>(pattern, event)`,
 * `compilePattern<Order>(…)`, `matching<Order>(…)` refuse, at compile time, a condition on an
 * attribute Order does not have (`NewImage.stauts`). The same JSON as FilterPattern, with the
 * stream record's fields spelled out; anything else goes through the untyped FilterPattern.
 */
export interface ItemFilterPattern<T> {
  readonly eventID?: Conditions;
  readonly eventName?: Conditions;
  readonly eventVersion?: Conditions;
  readonly eventSource?: Conditions;
  readonly awsRegion?: Conditions;
  readonly eventSourceARN?: Conditions;
  readonly userIdentity?: { readonly type?: Conditions; readonly principalId?: Conditions };
  readonly dynamodb?: {
    readonly Keys?: ImagePattern<T>;
    readonly NewImage?: ImagePattern<T>;
    readonly OldImage?: ImagePattern<T>;
    readonly ApproximateCreationDateTime?: Conditions;
    readonly SequenceNumber?: Conditions;
    readonly SizeBytes?: Conditions;
    readonly StreamViewType?: Conditions;
  };
  readonly $or?: readonly ItemFilterPattern<T>[];
}
