import { ServerlessConfigError, TemplateReadError } from './errors.js';
import { evaluate, isRecord } from './intrinsics.js';
import type { ServerlessConfig } from './serverless-config.js';
import { planServiceResources } from './service-resources.js';
import type { StreamEventSettings, StreamFunctionSettings } from './stream-function.js';
import { withParameterDefaults } from './template.js';
import {
  checkStreamSource,
  mappingSettings,
  mappingSource,
  type TemplateResourceMap,
} from './template-mapping.js';

/**
 * serverless.yml's stream functions as the stack it deploys has them: a function's `stream` event
 * unless `resources.extensions` gives the mapping serverless generates for it a false Condition,
 * and every AWS::Lambda::EventSourceMapping of `resources:` whose Condition holds, on a function
 * of the service (`Fn::GetAtt [<Key>LambdaFunction, Arn]` or `Ref`), read as a template's mapping
 * is (template-mapping.ts). tidewater's own Kinesis variant is both: infra/kinesis.yml switches
 * the generated DynamoDB mapping off and declares the Kinesis one.
 */
export async function serviceStreamFunctions(
  config: ServerlessConfig,
  keys?: readonly string[],
): Promise<StreamFunctionSettings[]> {
  const declared = await declaredMappings(config);
  const out: StreamFunctionSettings[] = [];
  for (const key of keys?.length ? keys : await config.functionKeys()) {
    const own = await config.streamFunction(key);
    const event = own && !declared.switchedOff(eventMappingLogicalId(key, own.stream)) ? own : undefined;
    const resources = declared.byFunction.get(key) ?? [];
    if (event && resources.length > 0)
      throw new ServerlessConfigError(
        config.file,
        `function '${key}' has a stream event and the mapping ${resources[0]?.id} in resources:; run one at a time`,
      );
    if (resources.length > 1)
      throw new ServerlessConfigError(
        config.file,
        `function '${key}' has more than one mapping in resources: (${resources.map((r) => r.id).join(', ')}); run them one at a time`,
      );
    const [mapping] = resources;
    if (event) out.push(event);
    else if (mapping) out.push({ ...(await config.functionSettings(key)), stream: mapping.stream });
    else if (keys?.length)
      throw new ServerlessConfigError(
        config.file,
        own
          ? `function '${key}': its stream event's mapping is switched off by a false Condition in resources.extensions`
          : `function '${key}' has no DynamoDB or Kinesis stream event`,
      );
  }
  return out;
}

/** serverless v3's logical id of a function (naming.getLambdaLogicalId). */
export function lambdaLogicalId(key: string): string {
  return `${normalizedName(key)}LambdaFunction`;
}

/**
 * serverless v3's logical id of the mapping it generates for a function's `stream` event
 * (naming.getStreamLogicalId): the stream named by the ARN's logical id, import or last segment.
 */
export function eventMappingLogicalId(
  key: string,
  stream: Pick<StreamEventSettings, 'arn' | 'source'>,
): string {
  const arn = stream.arn;
  let name = '';
  if (typeof arn === 'string') name = arn.split('/')[1] ?? '';
  else if (isRecord(arn)) {
    const getAtt = arn['Fn::GetAtt'];
    const join = arn['Fn::Join'];
    if (Array.isArray(getAtt)) name = String(getAtt[0]);
    else if (typeof getAtt === 'string') name = getAtt.split('.')[0] as string;
    else if (arn['Fn::ImportValue'] !== undefined) name = String(arn['Fn::ImportValue']);
    else if (arn.Ref !== undefined) name = String(arn.Ref);
    else if (Array.isArray(join) && Array.isArray(join[1]))
      name = String(join[1].at(-1) ?? '')
        .split('/')
        .at(-1) as string;
  }
  const type = stream.source === 'kinesis' ? 'Kinesis' : 'Dynamodb';
  return `${normalizedName(key)}EventSourceMapping${type}${upperFirst(name.replace(/[^0-9A-Za-z]/g, ''))}`;
}

function normalizedName(key: string): string {
  return upperFirst(key.replace(/-/g, 'Dash').replace(/_/g, 'Underscore'));
}

function upperFirst(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

interface DeclaredMappings {
  /** By function key, the mappings `resources:` declares for it. */
  byFunction: ReadonlyMap<string, readonly { id: string; stream: StreamEventSettings }[]>;
  /** Whether `resources.extensions` gives a generated resource a false Condition. */
  switchedOff(logicalId: string): boolean;
}

/** The mappings and extension Conditions of `resources:`; the plan is made only when there are some. */
async function declaredMappings(config: ServerlessConfig): Promise<DeclaredMappings> {
  const declared = await config.get('resources');
  const parts = (Array.isArray(declared) ? declared : [declared]).filter(isRecord);
  const declares = (part: Record<string, unknown>) =>
    Object.values(isRecord(part.Resources) ? part.Resources : {}).some(
      (r) => isRecord(r) && r.Type === 'AWS::Lambda::EventSourceMapping',
    ) ||
    Object.values(isRecord(part.extensions) ? part.extensions : {}).some(
      (e) => isRecord(e) && typeof e.Condition === 'string',
    );
  if (!parts.some(declares)) return { byFunction: new Map(), switchedOff: () => false };
  // The planner resolved the Conditions (parameters at their Defaults, each checked to have one)
  // and the tables' and streams' properties; a resource whose Condition is false is not deployed.
  const plan = await planServiceResources(config);
  const raw: Record<string, Record<string, unknown>> = {};
  const extensions: Record<string, unknown> = {};
  // A mapping's `Ref` to a parameter is its Default, as the planner reads the other resources.
  for (const { document } of withParameterDefaults(
    parts.map((document) => ({ where: config.file, document })),
  )) {
    if (!isRecord(document)) continue;
    Object.assign(raw, isRecord(document.Resources) ? document.Resources : {});
    Object.assign(extensions, isRecord(document.extensions) ? document.extensions : {});
  }
  const mappings = Object.entries(raw).filter(
    ([, r]) => isRecord(r) && r.Type === 'AWS::Lambda::EventSourceMapping',
  );
  const holds = (condition: unknown, where: string) =>
    typeof condition !== 'string' ||
    evaluate(
      { 'Fn::If': [condition, true, false] },
      {
        region: plan.region,
        stackName: plan.stackName,
        conditions: { ...plan.conditions },
        evaluatedConditions: new Map(),
        where: `${config.file}: resources ${where}.Condition`,
      },
    ) === true;
  const resources: Record<string, { Type: string; Properties?: Record<string, unknown> }> = {};
  for (const [id, r] of Object.entries(raw))
    if (isRecord(r) && typeof r.Type === 'string' && holds(r.Condition, id))
      resources[id] = { Type: r.Type, ...(isRecord(r.Properties) ? { Properties: r.Properties } : {}) };
  for (const planned of [...plan.tables, ...plan.kinesisStreams])
    resources[planned.logicalId] = { Type: planned.type, Properties: { ...planned.properties } };
  const functionOf = new Map((await config.functionKeys()).map((key) => [lambdaLogicalId(key), key]));
  const byFunction = new Map<string, { id: string; stream: StreamEventSettings }[]>();
  for (const [id, mapping] of mappings) {
    if (!(id in resources)) continue;
    const properties = isRecord(mapping.Properties) ? mapping.Properties : {};
    const key = functionOf.get(functionReference(properties.FunctionName) ?? '');
    if (key === undefined)
      throw new ServerlessConfigError(
        config.file,
        `resources ${id}.FunctionName: must be Fn::GetAtt [<Key>LambdaFunction, Arn] or Ref of a function ` +
          `under functions: (${[...functionOf.keys()].join(', ')}), got ${JSON.stringify(properties.FunctionName)}`,
      );
    const stream = asConfigError(config.file, () => {
      const site = { file: config.file, resource: id };
      const source = mappingSource(properties.EventSourceArn, resources as TemplateResourceMap);
      const settings = mappingSettings(site, properties, 'EventSourceArn', '', source);
      checkStreamSource(site, 'EventSourceArn', settings, resources as TemplateResourceMap);
      return settings;
    });
    byFunction.set(key, [...(byFunction.get(key) ?? []), { id, stream }]);
  }
  return {
    byFunction,
    switchedOff: (logicalId) => {
      const extension = extensions[logicalId];
      return isRecord(extension) && !holds(extension.Condition, `extensions ${logicalId}`);
    },
  };
}

/** The logical id in `Ref: X` or `Fn::GetAtt: [X, Arn]`. */
function functionReference(value: unknown): string | undefined {
  if (!isRecord(value)) return undefined;
  if (typeof value.Ref === 'string') return value.Ref;
  const getAtt = value['Fn::GetAtt'];
  if (Array.isArray(getAtt) && getAtt[1] === 'Arn') return String(getAtt[0]);
  if (typeof getAtt === 'string' && getAtt.endsWith('.Arn')) return getAtt.slice(0, -'.Arn'.length);
  return undefined;
}

/** A template reader's error about a mapping of `resources:`, as serverless.yml's own error type. */
function asConfigError<T>(file: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (!(error instanceof TemplateReadError)) throw error;
    throw new ServerlessConfigError(file, `resources ${error.message.slice(`${file}: `.length)}`);
  }
}
