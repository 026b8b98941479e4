// The archive function's stream filter, generated from tidewater's filter builder at packaging
// time so the deployed FilterCriteria cannot drift from the code that routes records (a record
// matching no filter is dropped by Lambda, never seen by the handler).
//
// Serverless v3 `${file(...)}` only `require`s .js/.cjs, and tidewater is ESM, so the built
// filters (dist/, next to this folder in the installed package) are loaded with import(): a
// `${file()}` module may export a promise.
//
// Exports a promise of { 'ttl-deletes': patterns, 'all-deletes': patterns, 'every-change': patterns }
// for serverless.yml's stream event, and the same as FilterCriteria for Kinesis ('kinesis-ttl-deletes',
// 'kinesis-all-deletes', 'kinesis-every-change', infra/kinesis.yml); each picked with
// custom.tidewater.archiveRoutes.
'use strict';

const path = require('node:path');
const { pathToFileURL } = require('node:url');

async function filterPatterns() {
  const built = path.join(__dirname, '..', 'dist', 'filters', 'index.js');
  let filters;
  try {
    filters = await import(pathToFileURL(built).href);
  } catch (error) {
    throw new Error(
      `infra/filter-patterns.cjs: cannot load ${built} (${error.message}). In the tidewater repository, run \`npm run build\` first.`,
    );
  }
  const routes = {
    'ttl-deletes': [filters.ttlDeletes()],
    'all-deletes': [filters.ttlDeletes(), filters.userDeletes()],
    'every-change': [filters.everyChange()],
  };
  const out = {};
  for (const [name, patterns] of Object.entries(routes)) {
    out[name] = filters.toServerlessFilterPatterns(patterns);
    // The Kinesis trigger (infra/kinesis.yml) is a plain mapping resource: FilterCriteria as
    // CloudFormation takes it, the same patterns nested under `data`.
    out[`kinesis-${name}`] = filters.toFilterCriteria(filters.forKinesis(patterns));
  }
  return out;
}

module.exports = filterPatterns();
