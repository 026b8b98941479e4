import { statSync } from 'node:fs';
import { dirname } from 'node:path';
import { defineOptions, InvalidOptionsError, type TidewaterError } from '../../core/index.js';
import { LOCAL_REGION } from '../servers/dynamodb-local.js';
import { readCdkOut } from './cdk-out.js';
import { InfraDefinitionError, ServerlessConfigError, TemplateReadError } from './errors.js';
import type { LocalResourceRef } from './intrinsics.js';
import { createTemplateResources, type TemplateClients } from './resources.js';
import { readSamTemplate, type TemplateApp } from './sam-template.js';
import { loadServerlessConfig, type ServerlessConfig } from './serverless-config.js';
import { serviceStreamFunctions } from './service-mappings.js';
import {
  createServiceResources,
  plannedReferences,
  planServiceResources,
  type ResourceReferences,
  resolveEnvironment,
  type ServiceResources,
  serviceResources,
} from './service-resources.js';
import { handlerFile, type StreamFunctionSettings } from './stream-function.js';
import { planTemplateParts, type TemplatePlan } from './template.js';

/**
 * What `tidewater start` and `replay` run, whichever tool describes it: a serverless.yml, a SAM
 * template or a CDK app's cdk.out, read into one shape — its planned resources, its stream
 * functions, and its resources made real on the local servers. Three readers, one runtime.
 */
export interface LocalApp {
  /** What was read: serverless.yml, the SAM template, or the cdk.out folder. */
  readonly file: string;
  /** Handler paths, the service's esbuild and dist/ are taken from here. */
  readonly root: string;
  /** The service (serverless.yml), the template's folder (SAM) or the stacks (CDK). */
  readonly name: string;
  readonly stage: string;
  /** Where the resources are declared, for log lines: `serverless.yml's resources:`, `the template`. */
  readonly declaredIn: string;
  /** The tables, buckets and queues, planned for the local servers (nothing touched). */
  plan(): Promise<TemplatePlan>;
  /** Every stream function, or the ones named (each must exist and have a stream mapping). */
  streamFunctions(keys?: readonly string[]): Promise<StreamFunctionSettings[]>;
  /** What `Ref` / `Fn::GetAtt` give before anything is created (a replay's environment). */
  plannedReferences(options?: { sqsEndpoint?: string }): Promise<ResourceReferences>;
  /** Creates (or finds) the planned resources on the local servers. */
  createResources(clients: LocalAppClients): Promise<ServiceResources>;
  /** An error about the app as a whole, in the reader's own type. */
  error(message: string): TidewaterError;
}

/** The clients a LocalApp creates its resources with. */
export type LocalAppClients = TemplateClients;

/** Options of loadLocalApp: a serverless.yml, a SAM template or a cdk.out, and the stage. */
export interface LocalAppOptions {
  /** A serverless.yml (the default when neither a template nor a cdk.out is given). */
  config?: string;
  /** A SAM template (template.yaml). */
  template?: string;
  /** A CDK app's synthesized output folder (cdk.out). */
  cdkOut?: string;
  /** The stage: serverless.yml's `--stage`; for a template, the stack name's suffix. Default local. */
  stage?: string;
  /**
   * Whether a template's functions must be runnable here: each with its local code, each
   * environment variable resolved against the local resources (default true). false reads the
   * app for its resources and stream events only, as `tidewater capture` does: it runs no function.
   */
  checkFunctions?: boolean;
}

const readOptions = defineOptions<LocalAppOptions>()('loadLocalApp', {
  config: { kind: 'nonEmptyString' },
  template: { kind: 'nonEmptyString' },
  cdkOut: { kind: 'nonEmptyString' },
  stage: { kind: 'nonEmptyString', default: 'local' },
  checkFunctions: { kind: 'boolean', default: true },
});

/**
 * Reads the app: exactly one of `config`, `template` and `cdkOut` (serverless.yml by default).
 * A template's problems — no stream mapping, no local code, a missing asset, a reference that
 * cannot be resolved locally — are TemplateReadErrors thrown here, before any server starts.
 */
export async function loadLocalApp(input: LocalAppOptions = {}): Promise<LocalApp> {
  const options = readOptions(input);
  const given = (['config', 'template', 'cdkOut'] as const).filter((k) => options[k] !== undefined);
  if (given.length > 1)
    throw new InvalidOptionsError(
      `loadLocalApp: give one of config, template and cdkOut, not ${given.join(' and ')}`,
      { option: given[1] },
    );
  const check = options.checkFunctions;
  if (options.template !== undefined)
    return templateApp(readSamTemplate(options.template), options.stage, check);
  if (options.cdkOut !== undefined)
    return templateApp(readCdkOut(options.cdkOut, options.stage), options.stage, check);
  return serverlessApp(
    await loadServerlessConfig({ file: options.config ?? 'serverless.yml', stage: options.stage }),
  );
}

/** A serverless.yml read with loadServerlessConfig, as a LocalApp. */
export async function serverlessApp(config: ServerlessConfig): Promise<LocalApp> {
  return {
    file: config.file,
    root: config.root,
    name: await config.service(),
    stage: await config.stage(),
    declaredIn: "serverless.yml's resources:",
    plan: () => planServiceResources(config),
    streamFunctions: (keys) => serviceStreamFunctions(config, keys),
    plannedReferences: async (options = {}) => plannedReferences(await planServiceResources(config), options),
    createResources: (clients) => createServiceResources({ config, ...clients }),
    error: (message) => new ServerlessConfigError(config.file, message),
  };
}

/** A SAM template or cdk.out read into a TemplateApp, planned and (its functions, unless told not to) checked, as a LocalApp. */
export function templateApp(app: TemplateApp, stage: string, check = true): LocalApp {
  const parameters: Record<string, LocalResourceRef> = Object.fromEntries(
    Object.entries(app.parameters).map(([name, value]) => [
      name,
      { type: 'AWS::CloudFormation::Parameter', ref: value, attributes: {} },
    ]),
  );
  let plan: TemplatePlan;
  try {
    plan = planTemplateParts(
      [{ where: app.file, document: { Resources: app.resources, Conditions: app.conditions } }],
      {
        service: app.name,
        stage,
        region: LOCAL_REGION,
        source: app.file,
        refs: parameters,
      },
    );
  } catch (error) {
    // The planner names the resource and property in its `where`: `<file>: <Id>.<Property>`.
    if (!(error instanceof InfraDefinitionError)) throw error;
    const [resource = 'Resources', property = ''] = error.where.replace(`${app.file}: `, '').split(/\.(.*)/s);
    throw new TemplateReadError(app.file, resource, property, error.message.replace(`${error.where}: `, ''));
  }
  const references = (options: { sqsEndpoint?: string } = {}): ResourceReferences => {
    const planned = plannedReferences(plan, options);
    return { ...planned, refs: { ...parameters, ...planned.refs } };
  };
  if (check) checkFunctions(app, references(), plan);
  const error = (message: string) => new TemplateReadError(app.file, 'template', '', message);
  return {
    file: app.file,
    root: statSync(app.file).isDirectory() ? app.file : dirname(app.file),
    name: app.name,
    stage,
    declaredIn: 'the template',
    plan: async () => plan,
    async streamFunctions(keys) {
      if (!keys?.length) return app.functions;
      return keys.map((key) => {
        const fn = app.functions.find((f) => f.key === key);
        if (!fn)
          throw error(
            `no stream mapping runs a function '${key}' (have ${app.functions.map((f) => f.key).join(', ')})`,
          );
        return fn;
      });
    },
    plannedReferences: async (options) => references(options),
    async createResources(clients) {
      const created = await createTemplateResources(plan, clients);
      return serviceResources({ ...created, refs: { ...parameters, ...created.refs } }, error);
    },
    error,
  };
}

/**
 * Before any server starts: every function's handler file exists, and every variable of its
 * environment resolves against the planned resources (a table's StreamArn stands in until the
 * table exists), or the TemplateReadError names the function and the variable.
 */
function checkFunctions(app: TemplateApp, references: ResourceReferences, plan: TemplatePlan): void {
  const refs: Record<string, LocalResourceRef> = { ...references.refs };
  for (const table of plan.tables) {
    const ref = refs[table.logicalId];
    if (ref && table.createTable.StreamSpecification)
      refs[table.logicalId] = {
        ...ref,
        attributes: { ...ref.attributes, StreamArn: `${ref.attributes.Arn}/stream/local` },
      };
  }
  for (const fn of app.functions) {
    const site = app.sites[fn.key] ?? { file: app.file, resource: fn.key };
    try {
      handlerFile(fn);
    } catch {
      throw new TemplateReadError(
        site.file,
        site.resource,
        'Handler',
        `${fn.handler}: no ${fn.handlerModule}.{ts,mts,js,mjs,cjs}: the function has no local code`,
      );
    }
    const { unresolved } = resolveEnvironment(fn.environment, { ...references, refs });
    const [first] = unresolved;
    if (first)
      throw new TemplateReadError(
        site.file,
        site.resource,
        `Environment.Variables.${first.name}`,
        `${first.reason} (the local servers have only the template's tables, buckets and queues)`,
      );
  }
}
