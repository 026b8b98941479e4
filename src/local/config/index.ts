// What a service's serverless.yml and tidewater's infra/ say, read as serverless v3 and
// CloudFormation would read them (one variable resolver, one intrinsic evaluator, one template
// planner), and the tables, buckets and queues they declare made real on the local servers.
export {
  ConditionCycleError,
  InfraDefinitionError,
  LocalResourceConflictError,
  ServerlessConfigError,
  TemplateReadError,
} from './errors.js';
export type { InfraOptions, InfraPlan, InfraSettings } from './infra.js';
export { planLocalResources } from './infra.js';
export type { LocalResourceRef } from './intrinsics.js';
export type { LocalApp, LocalAppClients, LocalAppOptions } from './local-app.js';
export { loadLocalApp } from './local-app.js';
export type { LocalQueue, LocalResources, LocalResourcesOptions, TemplateResources } from './resources.js';
export { createLocalResources } from './resources.js';
export type { ServerlessConfigOptions } from './serverless-config.js';
export { loadServerlessConfig, ServerlessConfig } from './serverless-config.js';
export type {
  ResourceReferences,
  ServiceResources,
  ServiceResourcesOptions,
  UnresolvedVariable,
} from './service-resources.js';
export { createServiceResources } from './service-resources.js';
export type { StreamEventSettings, StreamFunctionSettings } from './stream-function.js';
export { handlerFile, toEmulatorOptions } from './stream-function.js';
export type { TemplatePlan } from './template.js';
