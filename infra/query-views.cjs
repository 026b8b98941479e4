// The de-duplicating views of the NDJSON tables, which infra/query.yml saves as Athena queries:
// generated at packaging time by the same code the CDK's ArchiveQueryTables uses
// (src/archive/query-layout.ts; docs/query.md shows the statement, compared by test).
//
// Serverless v3 `${file(...)}` only `require`s .js/.cjs, and tidewater is ESM, so the built module
// (dist/, next to this folder in the installed package) is loaded with import(): a `${file()}`
// module may export a promise.
//
// Exports a promise of { ttl_archive, user_delete_archive, change_archive }: each a CREATE OR
// REPLACE VIEW <table>_dedup statement.
'use strict';

const path = require('node:path');
const { pathToFileURL } = require('node:url');

async function queryViews() {
  const built = path.join(__dirname, '..', 'dist', 'archive', 'query-layout.js');
  let layout;
  try {
    layout = await import(pathToFileURL(built).href);
  } catch (error) {
    throw new Error(
      `infra/query-views.cjs: cannot load ${built} (${error.message}). In the tidewater repository, run \`npm run build\` first.`,
    );
  }
  return {
    ttl_archive: layout.dedupViewSql('ttl_archive'),
    user_delete_archive: layout.dedupViewSql('user_delete_archive'),
    change_archive: layout.dedupViewSql('change_archive'),
  };
}

module.exports = queryViews();
