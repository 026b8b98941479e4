// What `require('tidewater')` (any entry point) resolves to. tidewater is ESM-only; without this
// file Node answers a require with ERR_PACKAGE_PATH_NOT_EXPORTED, which reads like a broken install.
class EsmOnlyPackageError extends Error {
  override readonly name = 'EsmOnlyPackageError';
  readonly code = 'TIDEWATER_ESM_ONLY';
}

throw new EsmOnlyPackageError(
  'tidewater is an ES module package and cannot be loaded with require(). ' +
    'Use `import { createStreamHandler } from "tidewater"` from an ES module ("type": "module" in ' +
    'package.json, or a .mjs / .mts file), or `await import("tidewater")` from CommonJS. ' +
    'To bundle for Lambda, use esbuild with format "esm" (see the README: "Bundle for Lambda").',
);
