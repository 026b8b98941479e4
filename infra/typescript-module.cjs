// Loads one of this package's TypeScript modules from plain JavaScript: serverless v3 `${file(...)}`
// modules (infra/filter-patterns.cjs) and scripts/package.js, which run under plain node.
//
// The package is ESM TypeScript, so the source is bundled in memory with esbuild (already a dev
// dependency) and evaluated as CommonJS. No build step, no loader flag: works from `serverless
// package`, from the local runtime's resolver, from scripts and from tests alike.
'use strict';

const path = require('node:path');
const Module = require('node:module');

/** The exports of the TypeScript module `entry` (an absolute path), bundled with its imports. */
function loadTypeScriptModule(entry) {
  const esbuild = require('esbuild');
  // buildSync, not build: build() starts esbuild's long-lived service, which keeps the serverless
  // process alive after a failed packaging (it hangs instead of exiting non-zero).
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

module.exports = { loadTypeScriptModule };
