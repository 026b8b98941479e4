// The archive function's stream filter, generated from src/filters at packaging time so the
// deployed FilterCriteria cannot drift from the code that routes records (a record matching no
// filter is dropped by Lambda, never seen by the handler).
//
// Serverless v3 `${file(...)}` only `require`s .js/.cjs, and this package is ESM TypeScript, so
// src/filters is loaded with infra/typescript-module.cjs (bundled in memory by esbuild).
//
// Exports a promise of { 'ttl-deletes': patterns, 'all-deletes': patterns }; serverless.yml
// picks one with custom.tidewater.archiveRoutes.
'use strict';

const path = require('node:path');
const { loadTypeScriptModule } = require('./typescript-module.cjs');

async function filterPatterns() {
  const filters = loadTypeScriptModule(path.join(__dirname, '..', 'src', 'filters', 'index.ts'));
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
