import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RestoreRequestError } from '../../../../src/local/servers/errors.js';
import {
  MAX_RESTORE_BODY_BYTES,
  parseRestoreRequest,
  RESTORE_TIERS,
} from '../../../../src/local/servers/s3-restore-request.js';

const request = (inner: string) =>
  `<RestoreRequest xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${inner}</RestoreRequest>`;

/** The parser's answer: the request, or the error's name and code. */
function outcome(text: string) {
  try {
    return parseRestoreRequest(text);
  } catch (error) {
    if (error instanceof RestoreRequestError) return `${error.name} ${error.code}`;
    throw error;
  }
}

describe('parseRestoreRequest', () => {
  it('takes Days and the tier, from GlacierJobParameters or the top-level Tier; Standard by default', () => {
    expect(
      outcome(request('<Days>3</Days><GlacierJobParameters><Tier>Bulk</Tier></GlacierJobParameters>')),
    ).toEqual({
      days: 3,
      tier: 'Bulk',
    });
    expect(
      outcome(`<?xml version="1.0" encoding="UTF-8"?>\n${request('<Days>1</Days><Tier>Expedited</Tier>')}`),
    ).toEqual({
      days: 1,
      tier: 'Expedited',
    });
    expect(outcome(request(' <Days> 7 </Days> <Description>for the audit</Description> '))).toEqual({
      days: 7,
      tier: 'Standard',
    });
  });

  it.each([
    ['an empty body', ''],
    ['another document', '<Delete><Object><Key>k</Key></Object></Delete>'],
    ['no Days', request('<GlacierJobParameters><Tier>Bulk</Tier></GlacierJobParameters>')],
    ['Days 0', request('<Days>0</Days>')],
    ['Days negative', request('<Days>-1</Days>')],
    ['Days a fraction', request('<Days>1.5</Days>')],
    ['Days beyond the bound', request('<Days>99999999999</Days>')],
    ['two Days', request('<Days>1</Days><Days>2</Days>')],
    [
      'an unknown tier',
      request('<Days>1</Days><GlacierJobParameters><Tier>bulk</Tier></GlacierJobParameters>'),
    ],
    ['two GlacierJobParameters', request('<Days>1</Days><GlacierJobParameters/><GlacierJobParameters/>')],
    ['an unknown element', request('<Days>1</Days><Speed>fast</Speed>')],
    ['an element inside Days', request('<Days><N>1</N></Days>')],
    ['an entity declaration', `<!DOCTYPE r [<!ENTITY d "1">]>${request('<Days>&d;</Days>')}`],
    ['an unclosed element', '<RestoreRequest><Days>1</Days>'],
    [
      'a body over the bound',
      request(`<Days>1</Days><Description>${'x'.repeat(MAX_RESTORE_BODY_BYTES)}</Description>`),
    ],
  ])('refuses %s as MalformedXML', (_what, text) => {
    expect(outcome(text)).toBe('RestoreRequestError MalformedXML');
  });

  it('answers an S3 Select restore NotImplemented', () => {
    expect(outcome(request('<Type>SELECT</Type><Days>1</Days>'))).toBe('RestoreRequestError NotImplemented');
  });

  it('round-trips every Days and tier it takes', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000 }), fc.constantFrom(...RESTORE_TIERS), (days, tier) => {
        expect(
          parseRestoreRequest(
            request(`<Days>${days}</Days><GlacierJobParameters><Tier>${tier}</Tier></GlacierJobParameters>`),
          ),
        ).toEqual({ days, tier });
      }),
    );
  });

  it('answers any text with a request or a RestoreRequestError, nothing else', () => {
    const pieces = fc.constantFrom(
      '<RestoreRequest>',
      '</RestoreRequest>',
      '<Days>',
      '</Days>',
      '<GlacierJobParameters>',
      '</GlacierJobParameters>',
      '<Tier>',
      '</Tier>',
      'Bulk',
      '12',
      '&amp;',
      '&#0;',
      '<!--',
      '<![CDATA[',
      '<a:Days>',
    );
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 300 }),
          fc.array(pieces, { maxLength: 30 }).map((p) => p.join('')),
        ),
        (text) => {
          const result = outcome(text);
          if (typeof result === 'string')
            expect(result).toMatch(/^RestoreRequestError (MalformedXML|NotImplemented)$/);
          else expect(RESTORE_TIERS).toContain(result.tier);
        },
      ),
    );
  });
});
