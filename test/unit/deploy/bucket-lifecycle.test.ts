import { describe, expect, it } from 'vitest';
import { loadServerlessConfig } from '../../../src/local/config/serverless-config.js';

type Rule = { Id: string; Prefix?: string; ExpirationInDays?: number; NoncurrentVersionExpiration?: unknown };

async function bucketRules(env: Record<string, string>): Promise<Rule[]> {
  const config = await loadServerlessConfig({ file: 'serverless.yml', env });
  type Bucket = { Properties: { LifecycleConfiguration: { Rules: Rule[] } } };
  const resources = (await config.get('resources')) as { Resources?: Record<string, Bucket> }[];
  const bucket = resources.map((r) => r.Resources?.ArchiveBucket).find(Boolean);
  return bucket?.Properties.LifecycleConfiguration.Rules ?? [];
}

describe("the archive bucket's lifecycle", () => {
  it('expires dead-letter entries (whole item images) after deadLetterExpireAfterDays, 30 by default', async () => {
    const rule = (await bucketRules({})).find((r) => r.Id === 'dead-letter-expiry');
    expect(rule).toMatchObject({
      Status: 'Enabled',
      Prefix: 'dead-letter/',
      NoncurrentVersionExpiration: { NoncurrentDays: 1 },
    });
    expect(Number(rule?.ExpirationInDays)).toBe(30);
    const custom = await bucketRules({
      TIDEWATER_DEAD_LETTER_EXPIRE_DAYS: '7',
      TIDEWATER_DEAD_LETTER_PREFIX: 'dlq/',
    });
    const customRule = custom.find((r) => r.Id === 'dead-letter-expiry');
    expect(customRule?.Prefix).toBe('dlq/');
    expect(Number(customRule?.ExpirationInDays)).toBe(7);
  });
});
