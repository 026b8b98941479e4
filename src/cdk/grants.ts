// Least privilege by construction: every grant the constructs make goes through these helpers,
// which name their actions (no `*` in an action) and their resources (a stream, a key prefix of a
// bucket, a queue, a key through one service) — never CDK's grant* methods, whose action lists
// carry wildcards (`s3:GetObject*`, `kms:ReEncrypt*`) and whose stream grant lists streams on `*`.

import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { Aws } from 'aws-cdk-lib/core';
import type { IConstruct } from 'constructs';

/** The services that use a key on a function's behalf (the kms:ViaService condition's values). */
export type KeyService = 's3' | 'sqs' | 'dynamodb';

/** Grants made for one function; `before` makes a resource wait for them (a mapping, a rule). */
export class Grants {
  private readonly made: iam.Grant[] = [];

  constructor(private readonly fn: lambda.IFunction) {}

  /** `actions` on `resources`, with optional IAM conditions. */
  allow(
    actions: readonly string[],
    resources: readonly string[],
    conditions?: Record<string, Record<string, unknown>>,
  ): this {
    this.made.push(
      iam.Grant.addToPrincipal({
        grantee: this.fn,
        actions: [...actions],
        resourceArns: [...resources],
        conditions,
      }),
    );
    return this;
  }

  /** `actions` on the objects under `prefix` (which ends in `/`) of `bucket`. */
  objects(bucket: s3.IBucket, prefix: string, actions: readonly string[]): this {
    return this.allow(actions, [bucket.arnForObjects(`${prefix}*`)]);
  }

  /** `actions` on `key`, only as `services` use it for the function, in the stack's region. */
  key(key: kms.IKey | undefined, actions: readonly string[], services: readonly KeyService[]): this {
    if (key === undefined) return this;
    const via = services.map((service) => `${service}.${Aws.REGION}.amazonaws.com`);
    return this.allow(actions, [key.keyArn], { StringEquals: { 'kms:ViaService': via } });
  }

  /** Makes `construct` (and everything in it) wait for these grants. */
  before(construct: IConstruct): void {
    for (const grant of this.made) grant.applyBefore(construct);
  }
}
