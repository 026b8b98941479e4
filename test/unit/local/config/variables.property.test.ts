// Issue 36 §4: whatever `${self:…}` references a document holds — to each other, to themselves,
// embedded in text, inside lists and maps — resolving it gives a value or a tidewater error.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TidewaterError } from '../../../../src/core/index.js';
import { ServerlessConfigError } from '../../../../src/local/config/errors.js';
import { resolveSync, VariableResolver } from '../../../../src/local/config/variables.js';
import { namedValues } from './template-inputs.js';

describe('VariableResolver on any document', () => {
  it('gives a value or a tidewater error', () => {
    fc.assert(
      fc.property(namedValues, (custom) => {
        const resolver = new VariableResolver({
          document: { service: 's', custom },
          file: '/nowhere/serverless.yml',
          options: {},
          env: {},
          fail: (message) => new ServerlessConfigError('/nowhere/serverless.yml', message),
        });
        try {
          expect(resolveSync(resolver.get(''))).toMatchObject({ service: 's' });
        } catch (error) {
          if (!(error instanceof TidewaterError)) throw error;
        }
      }),
      { numRuns: 1000 },
    );
  });
});
