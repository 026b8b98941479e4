import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { childrenNamed, childText, escapeXml, readXml } from '../../../../src/local/servers/s3-xml.js';

describe('readXml (the bodies the local S3 server reads itself)', () => {
  it('reads the DeleteObjects body the AWS SDK sends, prolog, namespace and references included', () => {
    const root = readXml(
      '<?xml version="1.0" encoding="UTF-8"?><Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' +
        '<Object><Key>a&amp;b&#x0D;&#10;&lt;c&gt;&quot;&apos;</Key></Object><Object><Key>007</Key></Object>' +
        '<Quiet>true</Quiet></Delete>',
    );
    expect(root?.name).toBe('Delete');
    expect((root ? childrenNamed(root, 'Object') : []).map((o) => childText(o, 'Key'))).toEqual([
      'a&b\r\n<c>"\'',
      '007',
    ]);
  });

  it.each([
    ['a DOCTYPE', '<!DOCTYPE d [<!ENTITY e "x">]><Delete/>'],
    ['an unknown entity', '<Delete><Key>&e;</Key></Delete>'],
    ['a bare ampersand', '<Delete><Key>a & b</Key></Delete>'],
    ['a comment', '<Delete><!-- c --></Delete>'],
    ['CDATA', '<Delete><![CDATA[x]]></Delete>'],
    ['a processing instruction', '<Delete><?pi x?></Delete>'],
    ['mismatched tags', '<Delete><Key></Object></Delete>'],
    ['two roots', '<Delete/><Delete/>'],
    ['text outside the root', 'x<Delete/>'],
    ['a surrogate reference', '<Delete><Key>&#xD800;</Key></Delete>'],
    ['a reference past Unicode', '<Delete><Key>&#x110000;</Key></Delete>'],
    ['nesting deeper than eight', `${'<a>'.repeat(9)}${'</a>'.repeat(9)}`],
    ['an unterminated tag', '<Delete'],
  ])('refuses %s', (_, text) => {
    expect(readXml(text)).toBeUndefined();
  });

  it('reads back any text it was given escaped (fast-check)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 64 }), (text) => {
        const root = readXml(`<Delete><Object><Key>${escapeXml(text)}</Key></Object></Delete>`);
        const object = root ? childrenNamed(root, 'Object')[0] : undefined;
        expect(object ? childText(object, 'Key') : undefined).toBe(text);
      }),
      { numRuns: 300 },
    );
  });

  it('answers any input, hostile or not, with an element or undefined, never a throw (fast-check)', () => {
    const pieces = fc.constantFrom(
      '<',
      '>',
      '</',
      '/>',
      '&',
      ';',
      '#x',
      '"',
      "'",
      '=',
      ' ',
      'a',
      'Key',
      '<?xml ?>',
      '<!',
    );
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 200 }),
          fc.array(pieces, { maxLength: 60 }).map((p) => p.join('')),
        ),
        (text) => {
          const root = readXml(text);
          expect(root === undefined || typeof root.name === 'string').toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });
});
