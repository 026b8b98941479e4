// The archive function's stream filter, generated from src/filters at packaging time so the
// deployed FilterCriteria cannot drift from the code that routes records (a record matching no
// filter is dropped by Lambda, never seen by the handler).
//
// Serverless v3 `${file(...)}` only `require`s .js/.cjs, and this package is ESM TypeScript, so the
// TypeScript source is bundled in memory with esbuild (already a dev dependency) and evaluated as
// CommonJS. No build step, no loader flag: works from `serverless package`, from the local
// runtime's resolver, and from tests alike.
//
// Exports a promise of { 'ttl-deletes': patterns, 'all-deletes': patterns }; serverless.yml
// picks one with custom.tidewater.archiveRoutes.
'use strict';

const path = require('node:path');
const Module = require('node:module');

// buildSync, not build: build() starts esbuild's long-lived service, which keeps the serverless
// process alive after a failed packaging (it hangs instead of exiting non-zero).
function loadFilters() {
  const esbuild = require('esbuild');
  const entry = path.join(__dirname, '..', 'src', 'filters', 'index.ts');
  const result = esbuild.buildSync({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    logLevel: 'silent',
  });
  const compiled = new Module(entry);
  compiled.filename = entry;
  compiled.paths = Module._nodeModulePaths(path.dirname(entry));
  compiled._compile(result.outputFiles[0].text, entry);
  return compiled.exports;
}

async function filterPatterns() {
  const filters = loadFilters();
  for (const name of ['ttlDeletes', 'userDeletes', 'toServerlessFilterPatterns']) {
    if (typeof filters[name] !== 'function') {
      throw new Error(`infra/filter-patterns.cjs: src/filters does not export ${name}()`);
    }
  }
  return {
    'ttl-deletes': filters.toServerlessFilterPatterns([filters.ttlDeletes()]),
    'all-deletes': filters.toServerlessFilterPatterns([filters.ttlDeletes(), filters.userDeletes()]),
  };
}

module.exports = filterPatterns();
