// The docs' link check (scripts/check-doc-links.js, run by `npm test` before vitest): relative links
// and anchors of README.md, CHANGELOG.md and docs/*.md, checked offline.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { anchorsOf, checkDocLinks, linkedFiles, linksOf } from '../../../scripts/check-doc-links.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function repo(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'tidewater-links-'));
  made.push(dir);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

describe('anchorsOf: GitHub heading anchors', () => {
  it.each([
    ['## Tumbling windows (`tumblingWindowInSeconds`)', 'tumbling-windows-tumblingwindowinseconds'],
    [
      '### `tidewater start` and `replay` for a Kinesis function',
      'tidewater-start-and-replay-for-a-kinesis-function',
    ],
    ['## 0.2.0 — unreleased', '020--unreleased'],
    ['# Handoff to the stream', 'handoff-to-the-stream'],
    ['## A [linked](x.md) heading', 'a-linked-heading'],
  ])('%s → #%s', (heading, anchor) => {
    expect([...anchorsOf(`${heading}\n`)]).toEqual([anchor]);
  });

  it('numbers repeated headings and ignores headings inside code blocks', () => {
    const anchors = anchorsOf(
      '## Install\n\n```sh\n# not a heading\n```\n\n## Install\n<a id="custom"></a>\n',
    );
    expect([...anchors].sort()).toEqual(['custom', 'install', 'install-1']);
  });
});

describe('linksOf', () => {
  it('finds inline links and definitions, not links in code', () => {
    const links = linksOf('See [a](a.md#x) and `[b](b.md)`.\n\n```md\n[c](c.md)\n```\n[d]: d.md\n');
    expect(links).toEqual([
      { target: 'a.md#x', line: 1 },
      { target: 'd.md', line: 6 },
    ]);
  });
});

describe('checkDocLinks', () => {
  it('reports a missing file, a missing anchor and a link out of the repository, and passes good links', () => {
    const dir = repo({
      'README.md': '[guide](docs/guide.md#setup) [web](https://example.com) [self](#top)\n# Top\n',
      'docs/guide.md':
        '# Guide\n## Setup\n[gone](missing.md) [bad](../README.md#nowhere) [out](../../x.md)\n',
    });
    expect(checkDocLinks(dir, ['README.md', 'docs/guide.md'])).toEqual([
      'docs/guide.md:3: missing.md: no such file',
      'docs/guide.md:3: ../README.md#nowhere: README.md has no heading #nowhere',
      'docs/guide.md:3: ../../x.md leaves the repository',
    ]);
  });

  it("finds every link of this repository's docs", () => {
    const files = linkedFiles(root);
    expect(files).toEqual(expect.arrayContaining(['README.md', 'CHANGELOG.md', 'docs/getting-started.md']));
    expect(checkDocLinks(root)).toEqual([]);
  });
});

describe('the API reference (npm run docs:api)', () => {
  it('documents every package entry: typedoc.json lists the source of each export of package.json', () => {
    const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
      exports: Record<string, string | { types?: string }>;
      scripts: Record<string, string>;
    };
    const typedoc = JSON.parse(readFileSync(path.join(root, 'typedoc.json'), 'utf8')) as {
      entryPoints: string[];
      treatWarningsAsErrors: boolean;
    };
    const sources = Object.values(manifest.exports)
      .flatMap((target) => (typeof target === 'object' && target.types !== undefined ? [target.types] : []))
      .map((types) => types.replace(/^\.\/dist\//, 'src/').replace(/\.d\.ts$/, '.ts'));
    expect([...typedoc.entryPoints].sort()).toEqual(sources.sort());
    expect(typedoc.treatWarningsAsErrors).toBe(true);
    expect(manifest.scripts.test).toContain('npm run docs:links && npm run docs:api');
  });
});
