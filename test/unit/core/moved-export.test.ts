import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as archive from '../../../src/archive.js';
import { MovedExportError, movedExport } from '../../../src/core/moved-export.js';
import * as root from '../../../src/index.js';
import * as local from '../../../src/local/index.js';
import * as logging from '../../../src/logging/index.js';
import * as testing from '../../../src/testing.js';

// Issue 38, item 16: a name that left an entry stays there for one minor version as a value that
// throws naming its new home, instead of Node's link-time "does not provide an export named".
const MOVED = [
  ['tidewater', root, 'InjectedSinkFailure', "import { InjectedSinkFailure } from 'tidewater/testing'"],
  ['tidewater/local', local, 'StreamEventBuilder', "import { StreamEventBuilder } from 'tidewater/testing'"],
  ['tidewater/local', local, 'streamEvents', "import { streamEvents } from 'tidewater/testing'"],
  [
    'tidewater/local',
    local,
    'createLambdaContext',
    "import { createLambdaContext } from 'tidewater/testing'",
  ],
  [
    'tidewater/archive',
    archive,
    'tenantFromPartitionKey',
    "import { tenantFromPartitionKey } from 'tidewater'",
  ],
  ['tidewater/archive', archive, 'InvalidTenantError', "import { InvalidTenantError } from 'tidewater'"],
  ['tidewater/logging', logging, 'createJsonLogger', "import { createJsonLogger } from 'tidewater'"],
  ['tidewater/logging', logging, 'fromPowertoolsLogger', "import { fromPowertoolsLogger } from 'tidewater'"],
  ['tidewater/logging', logging, 'toLogSafe', "import { toLogSafe } from 'tidewater'"],
] as const;

function thrown(use: () => unknown): unknown {
  try {
    use();
  } catch (error) {
    return error;
  }
  throw new Error('expected the use to throw');
}

describe('moved exports: the old name throws naming the replacement', () => {
  it.each(MOVED)('%s %s', (entry, module, name, replacement) => {
    const value = (module as Record<string, unknown>)[name] as new (...args: unknown[]) => unknown;
    expect(typeof value).toBe('function');
    for (const use of [
      () => (value as unknown as (...args: unknown[]) => unknown)('x'),
      () => new value('x'),
      () => new Error('x') instanceof value,
    ]) {
      const error = thrown(use);
      expect(error).toBeInstanceOf(MovedExportError);
      expect((error as MovedExportError).name).toBe('MovedExportError');
      expect((error as MovedExportError).message).toContain(`${name} from '${entry}' has moved`);
      expect((error as MovedExportError).message).toContain(replacement);
      expect((error as MovedExportError).replacement).toBe(replacement);
    }
  });

  it('the new homes hold the real values', () => {
    expect(new testing.InjectedSinkFailure('7')).toBeInstanceOf(root.TidewaterError);
    expect(new testing.InjectedSinkFailure('7').name).toBe('InjectedSinkFailure');
    expect(typeof testing.StreamEventBuilder).toBe('function');
    expect(testing.createLambdaContext().functionName).toBe('test-function');
    expect(root.tenantFromPartitionKey).not.toBe(archive.tenantFromPartitionKey);
    expect(new root.InvalidTenantError('x', 'bad')).toBeInstanceOf(root.TidewaterError);
    expect(root.toLogSafe).not.toBe(logging.toLogSafe);
  });

  it('names the value after the old export', () => {
    expect(movedExport('oldName', 'tidewater', 'newName').name).toBe('oldName');
  });
});

describe('moved exports are listed where a user upgrading reads', () => {
  const read = (file: string) => readFileSync(new URL(`../../../${file}`, import.meta.url), 'utf8');
  it.each(['docs/upgrading.md', 'CHANGELOG.md'])('%s names each old name and its replacement', (file) => {
    const text = read(file);
    for (const [entry, , name] of MOVED) {
      expect(text, `${name} from ${entry}`).toMatch(
        new RegExp(`\\b${name}\\b[^\\n]*${entry.replace('/', '\\/')}`),
      );
    }
  });
});
