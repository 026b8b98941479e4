import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { defineOptions } from '../core/options.js';

/** What a test may set on a Lambda Context; every field has a default (Lambda's own, where it has one). */
export interface FakeContextOptions {
  /** The function's name. Default `test-function`. */
  functionName?: string;
  /** The invoked function's ARN. Default: the unqualified ARN of `functionName` in us-east-1, account 123456789012. */
  functionArn?: string;
  /** The invocation timeout the remaining time counts down from. Default 3000, Lambda's default timeout. */
  timeoutMs?: number;
  /** The function's memory. Default 128, Lambda's default memory size. */
  memoryLimitInMB?: number;
  /** The request id. Default: a new random UUID. */
  awsRequestId?: string;
}

// A test that names nothing still gets a context Lambda could have given (issue 38: every field
// required made `createLambdaContext()` a type error for what most tests need).
const readOptions = /* @__PURE__ */ defineOptions<FakeContextOptions>()('createLambdaContext', {
  functionName: { kind: 'nonEmptyString', default: 'test-function' },
  functionArn: { kind: 'nonEmptyString' },
  timeoutMs: { kind: 'number', min: 0, default: 3000 },
  memoryLimitInMB: { kind: 'integer', min: 1, default: 128 },
  awsRequestId: { kind: 'nonEmptyString' },
});

/** The ARN Lambda gives a function (unqualified: no version or alias). */
export function lambdaFunctionArn(region: string, accountId: string, functionName: string): string {
  return `arn:aws:lambda:${region}:${accountId}:function:${functionName}`;
}

/** A Lambda Context whose remaining time counts down from the function's timeout, as in Lambda. */
export function createLambdaContext(options?: FakeContextOptions): Context {
  const o = readOptions(options);
  const deadline = performance.now() + o.timeoutMs;
  const noop = () => undefined;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: o.functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: o.functionArn ?? lambdaFunctionArn('us-east-1', '123456789012', o.functionName),
    memoryLimitInMB: String(o.memoryLimitInMB),
    awsRequestId: o.awsRequestId ?? randomUUID(),
    logGroupName: `/aws/lambda/${o.functionName}`,
    logStreamName: `${new Date().toISOString().slice(0, 10).replaceAll('-', '/')}/[$LATEST]${randomUUID().replaceAll('-', '')}`,
    getRemainingTimeInMillis: () => Math.max(0, Math.floor(deadline - performance.now())),
    done: noop,
    fail: noop,
    succeed: noop,
  };
}
