import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // DynamoDB Local starts a JVM: give the first start room on a busy machine.
    hookTimeout: 120_000,
    testTimeout: 120_000,
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
