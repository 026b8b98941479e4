import type { DynamoDBBatchResponse } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../../../src/core/errors.js';
import { EventSourceMappingEmulator } from '../../../../src/local/emulator/emulator.js';
import { StreamEventBuilder } from '../../../../src/local/emulator/events.js';
import type { EventSourceMappingOptions } from '../../../../src/local/emulator/mapping-options.js';

const builder = new StreamEventBuilder({ now: 1_767_225_600 });
const input = [builder.insert({ pk: 'a' }), builder.insert({ pk: 'b' }), builder.insert({ pk: 'c' })];
const second = input[1]!.dynamodb.SequenceNumber;

/** How many times each record reached the handler when it reports the second one failed, once. */
async function deliveries(setting: Partial<EventSourceMappingOptions>): Promise<number[]> {
  const seen = new Map<string, number>();
  let calls = 0;
  const emulator = new EventSourceMappingEmulator({
    ...setting,
    maximumRetryAttempts: 2,
    handler: async (event): Promise<DynamoDBBatchResponse> => {
      for (const record of event.Records)
        seen.set(record.dynamodb.SequenceNumber, (seen.get(record.dynamodb.SequenceNumber) ?? 0) + 1);
      calls++;
      return { batchItemFailures: calls === 1 ? [{ itemIdentifier: second }] : [] };
    },
  });
  await emulator.runRecords(input);
  return input.map((record) => seen.get(record.dynamodb.SequenceNumber) ?? 0);
}

describe('partial batch responses, under each name the setting has', () => {
  it("serverless.yml's functionResponseType and the API's functionResponseTypes mean reportBatchItemFailures", async () => {
    const honoured = [1, 2, 2]; // the response is read: the retry starts at the failed record
    expect(await deliveries({ reportBatchItemFailures: true })).toEqual(honoured);
    expect(await deliveries({ functionResponseType: 'ReportBatchItemFailures' })).toEqual(honoured);
    expect(await deliveries({ functionResponseTypes: ['ReportBatchItemFailures'] })).toEqual(honoured);
    // Without the setting Lambda ignores the response: the batch succeeded.
    expect(await deliveries({ functionResponseTypes: [] })).toEqual([1, 1, 1]);
  });

  it('refuses spellings that disagree, and a value Lambda does not know', () => {
    const handler = async () => {};
    expect(
      () =>
        new EventSourceMappingEmulator({
          handler,
          reportBatchItemFailures: false,
          functionResponseType: 'ReportBatchItemFailures',
        }),
    ).toThrow(InvalidOptionsError);
    expect(
      () => new EventSourceMappingEmulator({ handler, functionResponseType: 'ReportFailures' as never }),
    ).toThrow(/functionResponseType/);
  });
});
