// The vote aggregator on a schedule (src/handlers/aggregate-votes.ts, docs/votes.md): it sums one
// poll's sharded counters into total items. Its role reaches only that poll's items, by partition
// key (dynamodb:LeadingKeys), and writes only the totals.

import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as events from 'aws-cdk-lib/aws-events';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { Duration } from 'aws-cdk-lib/core';
import { Construct } from 'constructs';
import { defineOptions } from '../core/options.js';
import { POLL_ID_PATTERN } from '../votes/options.js';
import { type FunctionSource, resolveFunction, setEnvironment } from './function.js';
import { Grants } from './grants.js';
import { scheduleFunction } from './schedule.js';

/** Options of VoteAggregator: the table, function, poll layout and schedule. */
export interface VoteAggregatorProps {
  /** The table the poll's counters live in. */
  readonly table: dynamodb.ITable;
  /** The aggregator: your own on `aggregateVotes` (`tidewater/votes`), bundled. */
  readonly function: FunctionSource;
  /**
   * The poll it totals (keys `POLL#<poll>#…`): letters, digits, `.`, `_`, `-` only, since `*` or
   * `?` would be wildcards in the role's condition and open other polls.
   */
  readonly poll: string;
  /** Shard items per contestant; must equal the writers' VoteCounter `shards`. Default 10. */
  readonly shards?: number;
  /** Registry and totals partitions; must equal the writers'. Default 4. */
  readonly registryPartitions?: number;
  /** How often the totals are recomputed (whole minutes). Default 1 minute. */
  readonly rate?: Duration;
}

const readProps = /* @__PURE__ */ defineOptions<VoteAggregatorProps>()('VoteAggregator', {
  table: { kind: 'object', methods: ['grantReadData'], expected: 'a dynamodb.ITable', required: true },
  function: { kind: 'object', required: true },
  poll: {
    kind: 'custom',
    expected: `a poll id matching ${POLL_ID_PATTERN.source} (\`*\` or \`?\` would widen the role's condition to other polls)`,
    check: (v) => typeof v === 'string' && POLL_ID_PATTERN.test(v),
    required: true,
  },
  shards: { kind: 'integer', min: 1, default: 10 },
  registryPartitions: { kind: 'integer', min: 1, default: 4 },
  rate: { kind: 'object', methods: ['toSeconds'], expected: 'a Duration', default: Duration.minutes(1) },
});

/** The vote aggregator on a schedule, its role limited to one poll's items. */
export class VoteAggregator extends Construct {
  readonly function: lambda.IFunction;
  readonly rule: events.Rule;

  constructor(scope: Construct, id: string, props: VoteAggregatorProps) {
    super(scope, id);
    const o = readProps(props);
    const fn = resolveFunction(this, 'Function', o.function, {
      where: 'VoteAggregator',
      key: 'function',
      timeout: Duration.seconds(60),
    });
    this.function = fn;
    setEnvironment(fn, {
      TABLE_NAME: o.table.tableName,
      POLL: o.poll,
      SHARDS: String(o.shards),
      REGISTRY_PARTITIONS: String(o.registryPartitions),
    });
    const poll = `POLL#${o.poll}#`;
    const leadingKeys = (keys: string[]) => ({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': keys } });
    // GetItem reads the poll's recorded layout, Query the registry, BatchGetItem the shards and the
    // published totals. Not the voter markers (POLL#<poll>#VOTER#…: who voted for whom).
    const grants = new Grants(fn)
      .allow(
        ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query'],
        [o.table.tableArn],
        leadingKeys([`${poll}CONFIG`, `${poll}REGISTRY#*`, `${poll}VOTE#*`, `${poll}TOTALS#*`]),
      )
      .allow(['dynamodb:UpdateItem'], [o.table.tableArn], leadingKeys([`${poll}TOTALS#*`]))
      .key(
        o.table.encryptionKey,
        [
          'kms:Decrypt',
          'kms:DescribeKey',
          'kms:Encrypt',
          'kms:GenerateDataKey',
          'kms:GenerateDataKeyWithoutPlaintext',
        ],
        ['dynamodb'],
      );
    this.rule = scheduleFunction(this, 'Schedule', fn, o.rate);
    grants.before(this.rule);
  }
}
