#!/usr/bin/env node
import { main } from './program.js';

// Quiet the SDK's notice that its 2027 releases need Node 22 (the deploy runtime is nodejs22.x).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// A handler's stack names its own .ts lines, not .tidewater/handlers/<name>-<id>.mjs: the bundles
// carry inline source maps, which Node reads only when told (as --enable-source-maps would).
process.setSourceMapsEnabled(true);
process.exitCode = await main(process.argv.slice(2));
