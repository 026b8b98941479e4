import { TidewaterError } from '../../core/index.js';

/** `<where>: <detail>`: an error about one file, setting or resource, which `where` names. */
abstract class ConfigError extends TidewaterError {
  constructor(
    readonly where: string,
    detail: string,
  ) {
    super(`${where}: ${detail}`);
  }
}

/** serverless.yml cannot be read or a variable in it cannot be resolved. */
export class ServerlessConfigError extends ConfigError {
  override name = 'ServerlessConfigError';
  /** The serverless.yml (or a file it includes). */
  get file(): string {
    return this.where;
  }
}

/** An infra/ file or a setting could not be read or resolved. */
export class InfraDefinitionError extends ConfigError {
  override name = 'InfraDefinitionError';
}

/** CloudFormation Conditions that refer to each other in a circle (A = Not B, B = Not A). */
export class ConditionCycleError extends InfraDefinitionError {
  override name = 'ConditionCycleError';
  constructor(
    where: string,
    /** The conditions around the circle, the first repeated at the end. */
    readonly cycle: readonly string[],
  ) {
    super(where, `Conditions form a cycle: ${cycle.join(' → ')}`);
  }
}

/** A resource already exists on the local server with a definition that differs from infra/. */
export class LocalResourceConflictError extends ConfigError {
  override name = 'LocalResourceConflictError';
  /** The table, bucket or queue. */
  get resource(): string {
    return this.where;
  }
}

/**
 * A SAM template or a CDK app's synthesized template cannot run locally: the resource and the
 * property that stop it are named, and nothing has started.
 */
export class TemplateReadError extends ConfigError {
  override name = 'TemplateReadError';
  constructor(
    readonly file: string,
    readonly resource: string,
    readonly property: string,
    detail: string,
  ) {
    super(`${file}: ${resource}${property ? `.${property}` : ''}`, detail);
  }
}
