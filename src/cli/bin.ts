#!/usr/bin/env node
import { main } from './program.js';

// Quiet the SDK's notice that its 2027 releases need Node 22 (the deploy runtime is nodejs22.x).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
process.exitCode = await main(process.argv.slice(2));
