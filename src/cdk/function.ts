// The function a construct runs: the user's own (a lambda.IFunction), or one built here from its
// code. A built function gets its own role and log group, and the role holds only what the
// constructs grant: CDK's default role carries AWSLambdaBasicExecutionRole, whose logs grant has a
// `*` resource.

import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Duration } from 'aws-cdk-lib/core';
import type { Construct } from 'constructs';
import { defineOptions } from '../core/options.js';

/**
 * A function built from its code: Node.js 22 on arm64, as tidewater's serverless service deploys.
 * Bundle the handler yourself (esbuild, ESM, `@aws-sdk/*` external) into a folder holding
 * `index.mjs`, and give it as `lambda.Code.fromAsset(folder)`.
 */
export interface FunctionCode {
  /** The deployment package: `lambda.Code.fromAsset('dist/archive')`. */
  readonly code: lambda.Code;
  /** The handler, `<file>.<export>`. Default `index.handler`. */
  readonly handler?: string;
  /** Memory in MB (128 to 10240). Default 512. */
  readonly memorySize?: number;
  /** The invocation timeout. Default the construct's (60 seconds for a stream processor). */
  readonly timeout?: Duration;
  /** More environment variables; the construct's own settings (ARCHIVE_BUCKET, …) are added to them. */
  readonly environment?: Readonly<Record<string, string>>;
  /** The function's description. */
  readonly description?: string;
  /** Retention of the function's log group. Default one month. */
  readonly logRetention?: logs.RetentionDays;
}

/** What a construct's `function` option takes: an existing function, or the code to build one from. */
export type FunctionSource = lambda.IFunction | FunctionCode;

const readFunctionCode = /* @__PURE__ */ defineOptions<FunctionCode>()('function', {
  code: { kind: 'object', methods: ['bind'], expected: 'a lambda.Code', required: true },
  handler: { kind: 'nonEmptyString', default: 'index.handler' },
  memorySize: { kind: 'integer', min: 128, max: 10_240, default: 512 },
  timeout: { kind: 'object', methods: ['toSeconds'], expected: 'a Duration' },
  environment: { kind: 'object' },
  description: { kind: 'string' },
  logRetention: { kind: 'integer', min: 1, default: logs.RetentionDays.ONE_MONTH },
});

function isFunction(value: unknown): value is lambda.IFunction {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as lambda.IFunction).addEventSourceMapping === 'function'
  );
}

/**
 * The function of `source`, read on behalf of `where` (`StreamProcessor`) under the key `key`.
 * A built function is named `<id>` in `scope`, with `timeout` when the code props give none.
 */
export function resolveFunction(
  scope: Construct,
  id: string,
  source: unknown,
  at: { where: string; key: string; timeout: Duration },
): lambda.IFunction {
  if (isFunction(source)) return source;
  if (source === undefined)
    throw readFunctionCode.fail(
      `option '${at.key}' is required: a lambda.IFunction or { code: lambda.Code, … }`,
      at.key,
      at.where,
    );
  const o = readFunctionCode(source, at.where, `${at.key}.`);
  const logGroup = new logs.LogGroup(scope, `${id}Logs`, { retention: o.logRetention });
  const role = new iam.Role(scope, `${id}Role`, {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
  });
  const fn = new lambda.Function(scope, id, {
    runtime: lambda.Runtime.NODEJS_22_X,
    architecture: lambda.Architecture.ARM_64,
    code: o.code,
    handler: o.handler,
    memorySize: o.memorySize,
    timeout: o.timeout ?? at.timeout,
    description: o.description,
    role,
    logGroup,
    environment: { NODE_OPTIONS: '--enable-source-maps', ...o.environment },
  });
  // CreateLogGroup is left out: the group exists before the function does.
  iam.Grant.addToPrincipal({
    grantee: role,
    actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
    resourceArns: [logGroup.logGroupArn],
  }).applyBefore(fn);
  return fn;
}

/**
 * Sets a construct's settings on `fn`: a function built here, or one given as a lambda.Function.
 * An imported function (`lambda.Function.fromFunctionArn`) cannot be changed: set them yourself.
 */
export function setEnvironment(fn: lambda.IFunction, variables: Readonly<Record<string, string>>): void {
  if (!(fn instanceof lambda.Function)) return;
  for (const [name, value] of Object.entries(variables)) fn.addEnvironment(name, value);
}
