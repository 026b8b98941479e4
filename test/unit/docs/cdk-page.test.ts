// Issue 38, item 14: docs/cdk.md, step by step from a fresh service, says what is true — where
// app.synth() writes, what to install, which handler code exists to deploy.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { App } from 'aws-cdk-lib/core';
import { describe, expect, it } from 'vitest';
import { extractBlocks } from '../../../scripts/docs-snippets.js';

const page = readFileSync(new URL('../../../docs/cdk.md', import.meta.url), 'utf8');
const blocks = extractBlocks(page, 'docs/cdk.md').blocks;

describe('docs/cdk.md', () => {
  it('installs the CDK CLI and a way to run a TypeScript app', () => {
    const installs = blocks.filter((b) => b.lang === 'sh').map((b) => b.code);
    expect(installs.some((code) => /npm install --save-dev [^\n]*\btsx\b/.test(code))).toBe(true);
    expect(installs.some((code) => /npm install --save-dev aws-cdk\s*$/m.test(code))).toBe(true);
    const cdkJson = blocks.find((b) => b.lang === 'json');
    expect(JSON.parse(cdkJson!.code)).toEqual({ app: 'npx tsx cdk/app.ts' });
  });

  it("the worked app writes cdk.out because it names it, as App's default does not outside the CLI", () => {
    const app = blocks.find((b) => b.lang === 'ts' && b.code.includes('app.synth()'));
    expect(app?.code).toContain("new App({ outdir: 'cdk.out' })");
    // The semantic the page states, from aws-cdk-lib itself: no outdir and no CDK_OUTDIR (which
    // the CLI sets) is a new temporary folder; an outdir is that folder.
    const saved = process.env.CDK_OUTDIR;
    delete process.env.CDK_OUTDIR;
    try {
      expect(path.basename(new App().outdir)).not.toBe('cdk.out');
      expect(new App({ outdir: 'cdk.out' }).outdir).toBe('cdk.out');
    } finally {
      if (saved !== undefined) process.env.CDK_OUTDIR = saved;
    }
  });

  it('names no handler source the package does not ship', () => {
    const manifest = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      files: string[];
    };
    expect(manifest.files).not.toContain('src');
    expect(page).not.toMatch(/src\/handlers\/(archive-ttl|compact-archive|aggregate-votes)\.ts/);
    expect(page).toContain('the package ships no');
  });
});
