import { LOCAL_ACCOUNT_ID, LOCAL_REGION } from '../servers/dynamodb-local.js';
import { ConditionCycleError, InfraDefinitionError } from './errors.js';
import { MAX_NESTING_DEPTH } from './nesting.js';

/**
 * CloudFormation's intrinsic functions and pseudo parameters, evaluated as CloudFormation would
 * against the local resources: the one evaluator for infra/, serverless.yml's `resources:`, and a
 * function's environment and stream ARN (`Ref: Bucket`, `Fn::GetAtt: [Table, StreamArn]`).
 */

/** `Ref: AWS::NoValue`: the property (or list item) it stands in is left out. */
export const NO_VALUE: unique symbol = Symbol('AWS::NoValue');

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export interface IntrinsicContext {
  region: string;
  stackName: string;
  conditions: Record<string, unknown>;
  evaluatedConditions: Map<string, boolean>;
  /** The conditions being evaluated, outermost first: how a cycle among them is found. */
  evaluatingConditions?: readonly string[];
  where: string;
  /** The local resources `Ref` and `Fn::GetAtt` may name; without it they are errors. */
  refs?: Readonly<Record<string, LocalResourceRef>>;
}

/** What `Ref` and `Fn::GetAtt` give for one local resource (a table's name, a queue's URL, its ARN…). */
export interface LocalResourceRef {
  readonly type: string;
  /** `Ref`: a table's or bucket's name, a queue's URL. */
  readonly ref: string;
  /** `Fn::GetAtt` by attribute name: Arn, StreamArn, QueueName, QueueUrl, DomainName… */
  readonly attributes: Readonly<Record<string, string>>;
}

/** A resource of `refs` by its logical id: own entries only (`toString`, `__proto__` are ids too). */
function localResource(id: string, context: IntrinsicContext): LocalResourceRef | undefined {
  return context.refs !== undefined && Object.hasOwn(context.refs, id) ? context.refs[id] : undefined;
}

function resourceRef(name: string, context: IntrinsicContext): string | undefined {
  return localResource(name, context)?.ref;
}

function resourceAttribute(id: string, attribute: string, context: IntrinsicContext): string {
  const target = localResource(id, context);
  const value =
    target !== undefined && Object.hasOwn(target.attributes, attribute)
      ? target.attributes[attribute]
      : undefined;
  if (value === undefined) {
    throw new InfraDefinitionError(
      context.where,
      target
        ? `Fn::GetAtt ${id}.${attribute}: ${target.type} ${id} has no ${attribute} locally (has ${Object.keys(target.attributes).join(', ') || 'none'})`
        : `Fn::GetAtt ${id}.${attribute} is not available locally`,
    );
  }
  return value;
}

function pseudo(name: string, context: IntrinsicContext): string | typeof NO_VALUE | undefined {
  switch (name) {
    case 'AWS::NoValue':
      return NO_VALUE;
    case 'AWS::Region':
      return context.region;
    case 'AWS::AccountId':
      return LOCAL_ACCOUNT_ID;
    case 'AWS::Partition':
      return 'aws';
    case 'AWS::StackName':
      return context.stackName;
    case 'AWS::URLSuffix':
      return 'amazonaws.com';
    default:
      return undefined;
  }
}

function condition(name: string, context: IntrinsicContext, depth: number): boolean {
  const known = context.evaluatedConditions.get(name);
  if (known !== undefined) return known;
  if (!Object.hasOwn(context.conditions, name))
    throw new InfraDefinitionError(context.where, `unknown condition "${name}"`);
  // CloudFormation refuses a template whose conditions refer to each other in a circle; without
  // this the evaluation would recurse until the stack overflows, naming nothing.
  const evaluating = context.evaluatingConditions ?? [];
  if (evaluating.includes(name))
    throw new ConditionCycleError(context.where, [...evaluating.slice(evaluating.indexOf(name)), name]);
  const value = evaluate(
    context.conditions[name],
    { ...context, evaluatingConditions: [...evaluating, name] },
    depth + 1,
  );
  if (typeof value !== 'boolean')
    throw new InfraDefinitionError(context.where, `condition "${name}" is not a boolean`);
  context.evaluatedConditions.set(name, value);
  return value;
}

/**
 * A scalar argument or result as text; a list, a map or AWS::NoValue where text is needed is an
 * error naming the intrinsic (String() of a map without a prototype would be a raw TypeError).
 */
function text(value: unknown, what: string, context: IntrinsicContext): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new InfraDefinitionError(
    context.where,
    `${what} must be a string, got ${Array.isArray(value) ? 'a list' : value === NO_VALUE ? 'AWS::NoValue' : typeof value === 'object' && value !== null ? 'a mapping' : String(value)}`,
  );
}

/** An intrinsic's argument that must be a list (Fn::And's conditions, Fn::Join's values). */
function listOf(value: unknown, what: string, context: IntrinsicContext): unknown[] {
  if (!Array.isArray(value)) throw new InfraDefinitionError(context.where, `${what} must be a list`);
  return value;
}

/**
 * The intrinsics the emulated properties of table/bucket/queue use, evaluated as CloudFormation
 * would. Refs to other resources and Fn::GetAtt never appear in emulated properties, so meeting
 * one there is an error rather than a guess. `depth` bounds the recursion (values and conditions
 * inside one another) for a value built by code rather than read from a checked file.
 */
export function evaluate(node: unknown, context: IntrinsicContext, depth = 0): unknown {
  if (depth > MAX_NESTING_DEPTH * 2)
    throw new InfraDefinitionError(
      context.where,
      `nests deeper than ${MAX_NESTING_DEPTH * 2} levels (values and conditions inside one another)`,
    );
  const next = depth + 1;
  if (Array.isArray(node))
    return node.map((item) => evaluate(item, context, next)).filter((item) => item !== NO_VALUE);
  if (!isRecord(node)) return node;
  const keys = Object.keys(node);
  if (keys.length === 1) {
    const key = keys[0] as string;
    const arg = node[key];
    const list = (count: number): unknown[] => {
      if (!Array.isArray(arg) || arg.length !== count)
        throw new InfraDefinitionError(context.where, `${key} takes ${count} arguments`);
      return arg;
    };
    switch (key) {
      case 'Ref': {
        const name = text(arg, 'Ref', context);
        const value = pseudo(name, context) ?? resourceRef(name, context);
        if (value === undefined)
          throw new InfraDefinitionError(context.where, `Ref ${name} is not available locally`);
        return value;
      }
      case 'Fn::GetAtt': {
        const [id, attribute] = typeof arg === 'string' ? arg.split(/\.(.*)/s) : list(2);
        return resourceAttribute(
          text(id, 'Fn::GetAtt resource', context),
          text(evaluate(attribute, context, next), 'Fn::GetAtt attribute', context),
          context,
        );
      }
      case 'Condition':
        return condition(text(arg, 'Condition', context), context, next);
      case 'Fn::If': {
        const [name, whenTrue, whenFalse] = list(3);
        return evaluate(
          condition(text(name, 'Fn::If condition', context), context, next) ? whenTrue : whenFalse,
          context,
          next,
        );
      }
      case 'Fn::Equals': {
        const [a, b] = list(2).map((item) => evaluate(item, context, next));
        return JSON.stringify(a) === JSON.stringify(b);
      }
      case 'Fn::Not':
        return !evaluate(list(1)[0], context, next);
      case 'Fn::And':
        return listOf(arg, key, context).every((item) => evaluate(item, context, next) === true);
      case 'Fn::Or':
        return listOf(arg, key, context).some((item) => evaluate(item, context, next) === true);
      case 'Fn::Join': {
        const [delimiter, items] = list(2);
        return listOf(evaluate(items, context, next), 'Fn::Join values', context)
          .map((item) => text(item, 'a Fn::Join value', context))
          .join(text(delimiter, 'Fn::Join delimiter', context));
      }
      case 'Fn::Sub': {
        const [template, variables] = typeof arg === 'string' ? [arg, {}] : list(2);
        const values = evaluate(variables, context, next);
        if (!isRecord(values))
          throw new InfraDefinitionError(context.where, 'Fn::Sub variables must be a mapping');
        return text(template, 'Fn::Sub template', context).replace(
          /\$\{(!?)([^}]+)\}/g,
          (whole, bang: string, name: string) => {
            if (bang) return `\${${name}}`;
            if (Object.hasOwn(values, name)) return text(values[name], `Fn::Sub \${${name}}`, context);
            if (context.refs && name.includes('.') && !name.startsWith('AWS::')) {
              const [id, attribute] = name.split(/\.(.*)/s);
              return resourceAttribute(String(id), String(attribute), context);
            }
            const value = pseudo(name, context) ?? resourceRef(name, context);
            if (value === undefined || value === NO_VALUE) {
              throw new InfraDefinitionError(context.where, `Fn::Sub ${whole} is not available locally`);
            }
            return value;
          },
        );
      }
      default:
        if (key.startsWith('Fn::'))
          throw new InfraDefinitionError(context.where, `${key} is not supported locally`);
    }
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    const resolved = evaluate(value, context, next);
    // Keys are the template's text: defined as own properties, so `__proto__` is one like any other.
    if (resolved !== NO_VALUE)
      Object.defineProperty(out, key, {
        value: resolved,
        enumerable: true,
        writable: true,
        configurable: true,
      });
  }
  return out;
}

/** What `Ref` / `Fn::GetAtt` give for a bucket of this name. */
export function bucketRef(name: string, region: string): LocalResourceRef {
  return {
    type: 'AWS::S3::Bucket',
    ref: name,
    attributes: {
      Arn: `arn:aws:s3:::${name}`,
      DomainName: `${name}.s3.amazonaws.com`,
      RegionalDomainName: `${name}.s3.${region}.amazonaws.com`,
    },
  };
}

/**
 * Evaluates CloudFormation intrinsics in a value (a function's environment variable) against
 * local resources: Ref and Fn::GetAtt of `refs`, pseudo parameters, Fn::Sub, Fn::Join, Fn::If on
 * `conditions`. Throws InfraDefinitionError for what cannot be resolved locally.
 */
export function resolveIntrinsics(
  value: unknown,
  context: {
    refs: Readonly<Record<string, LocalResourceRef>>;
    stackName: string;
    region?: string;
    conditions?: Readonly<Record<string, unknown>>;
    where: string;
  },
): unknown {
  const resolved = evaluate(value, {
    region: context.region ?? LOCAL_REGION,
    stackName: context.stackName,
    conditions: { ...context.conditions },
    evaluatedConditions: new Map(),
    where: context.where,
    refs: context.refs,
  });
  return resolved === NO_VALUE ? undefined : resolved;
}
