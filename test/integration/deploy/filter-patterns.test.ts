import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import {
  everyChange,
  forKinesis,
  toFilterCriteria,
  toServerlessFilterPatterns,
  ttlDeletes,
  userDeletes,
} from '../../../src/filters/index.js';
import { ARCHIVE_ROUTES } from '../../../src/handlers/archive-settings.js';

// infra/filter-patterns.cjs is what serverless.yml and infra/kinesis.yml pick the archive
// function's filter from by archiveRoutes (it loads the built filters: `npm run build` first).

const require = createRequire(import.meta.url);

describe('infra/filter-patterns.cjs', () => {
  it('gives every ARCHIVE_ROUTES value its patterns, for the stream event and for the Kinesis mapping', async () => {
    const patterns = (await require('../../../infra/filter-patterns.cjs')) as Record<string, unknown>;
    const expected = {
      'ttl-deletes': [ttlDeletes()],
      'all-deletes': [ttlDeletes(), userDeletes()],
      'every-change': [everyChange()],
    };
    expect(Object.keys(expected)).toEqual([...ARCHIVE_ROUTES]);
    for (const [routes, filters] of Object.entries(expected)) {
      expect(patterns[routes]).toEqual(toServerlessFilterPatterns(filters));
      expect(patterns[`kinesis-${routes}`]).toEqual(toFilterCriteria(forKinesis(filters)));
    }
    expect(Object.keys(patterns).sort()).toEqual(
      [...ARCHIVE_ROUTES, ...ARCHIVE_ROUTES.map((r) => `kinesis-${r}`)].sort(),
    );
  });
});
