import { type AttributeValue, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { InvalidVoteOptionsError } from './errors.js';
import { ATTR } from './keys.js';
import type { PollContext } from './options.js';
import { withRetries } from './retry.js';

/**
 * The layout a poll's writers use, stored once per poll (item POLL#<poll>#CONFIG). An aggregator
 * configured with other numbers would sum the wrong shard items (an undercount nobody notices) or
 * list the wrong registry partitions, so both sides compare their options with this item.
 */
export interface PollLayout {
  shards: number;
  registryPartitions: number;
}

const NAMES = { '#pk': ATTR.pk, '#shards': ATTR.shards, '#partitions': ATTR.registryPartitions };
const CREATE_OR_SAME = 'attribute_not_exists(#pk) OR (#shards = :shards AND #partitions = :partitions)';

function isConditionalCheckFailed(error: unknown): boolean {
  return (error as { name?: unknown } | null)?.name === 'ConditionalCheckFailedException';
}

function layoutNumber(item: Record<string, AttributeValue>, attribute: string, pk: string): number {
  const value = Number(item[attribute]?.N);
  if (!Number.isInteger(value) || value < 1) {
    throw new InvalidVoteOptionsError(
      attribute,
      `poll layout: the poll's config item ${pk} holds ${JSON.stringify(item[attribute])} as '${attribute}', not a positive integer`,
    );
  }
  return value;
}

/** The stored layout, or undefined for a poll no writer of this version has touched yet. */
export async function readPollLayout(ctx: PollContext): Promise<PollLayout | undefined> {
  const key = ctx.keys.config();
  const result = await withRetries(
    () =>
      ctx.client.send(
        new GetItemCommand({
          TableName: ctx.tableName,
          Key: key,
          ConsistentRead: true,
          ProjectionExpression: '#shards, #partitions',
          ExpressionAttributeNames: { '#shards': ATTR.shards, '#partitions': ATTR.registryPartitions },
        }),
      ),
    { operation: `GetItem config of poll ${ctx.poll}`, attempts: ctx.maxAttempts, retryClass: 'idempotent' },
  );
  if (result.Item === undefined) return undefined;
  return {
    shards: layoutNumber(result.Item, ATTR.shards, key.pk.S),
    registryPartitions: layoutNumber(result.Item, ATTR.registryPartitions, key.pk.S),
  };
}

/** Throws InvalidVoteOptionsError naming the first setting that differs from the stored layout. */
export function checkPollLayout(ctx: PollContext, stored: PollLayout, where: string): void {
  const option = stored.shards !== ctx.shards ? 'shards' : 'registryPartitions';
  if (stored[option] === ctx[option]) return;
  throw new InvalidVoteOptionsError(
    option,
    `${where}: option '${option}' differs from the poll's recorded layout: ${where} uses shards=${ctx.shards}, registryPartitions=${ctx.registryPartitions}, but poll ` +
      `${ctx.poll} was written with shards=${stored.shards}, registryPartitions=${stored.registryPartitions} ` +
      `(item ${ctx.keys.config().pk.S}); every writer and the aggregator must use the same values`,
  );
}

/**
 * Writers: creates the config item, or verifies it equals this writer's layout (a conditional
 * Put, so two writers racing to create it cannot both win with different numbers).
 */
export async function ensurePollLayout(ctx: PollContext, where: string, again = true): Promise<void> {
  try {
    await withRetries(
      () =>
        ctx.client.send(
          new PutItemCommand({
            TableName: ctx.tableName,
            Item: {
              ...ctx.keys.config(),
              [ATTR.shards]: { N: String(ctx.shards) },
              [ATTR.registryPartitions]: { N: String(ctx.registryPartitions) },
            },
            ConditionExpression: CREATE_OR_SAME,
            ExpressionAttributeNames: NAMES,
            ExpressionAttributeValues: {
              ':shards': { N: String(ctx.shards) },
              ':partitions': { N: String(ctx.registryPartitions) },
            },
          }),
        ),
      // Putting the same fixed item twice is harmless.
      {
        operation: `PutItem config of poll ${ctx.poll}`,
        attempts: ctx.maxAttempts,
        retryClass: 'idempotent',
      },
    );
  } catch (error) {
    if (!isConditionalCheckFailed(error)) throw error;
    const stored = await readPollLayout(ctx);
    if (stored !== undefined) return checkPollLayout(ctx, stored, where);
    // Deleted between the Put and the Get (by hand: tidewater never deletes it): create it again, once.
    if (again) return ensurePollLayout(ctx, where, false);
    throw error;
  }
}

/**
 * One layout check per VoteCounter, shared by castVote and registry.register: the first call
 * sends it, later calls await the same settled promise. A mismatch stays cached (the options
 * cannot change); any other failure is forgotten so the next call tries again.
 */
export class PollLayoutGuard {
  private pending: Promise<void> | undefined;

  constructor(
    private readonly ctx: PollContext,
    private readonly where: string,
  ) {}

  ensure(): Promise<void> {
    if (this.pending === undefined) {
      const attempt = ensurePollLayout(this.ctx, this.where);
      this.pending = attempt;
      attempt.catch((error: unknown) => {
        if (!(error instanceof InvalidVoteOptionsError) && this.pending === attempt) this.pending = undefined;
      });
    }
    return this.pending;
  }
}
