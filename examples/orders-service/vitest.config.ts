import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // docs-check/: tidewater's README and docs code blocks, written there by tidewater's
    // scripts/consumer-test.js (scripts/docs-snippets.js); absent in a plain copy of the service.
    include: ['test/**/*.test.ts', 'docs-check/**/*.test.ts'],
    // DynamoDB Local starts a JVM: give the first start room on a busy machine.
    hookTimeout: 120_000,
    testTimeout: 120_000,
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
