import { afterAll, afterEach, vi } from 'vitest';
import { localClients } from './aws.js';

/**
 * For a test file that runs the CLI's `main` in process: the local servers' clients (destroyed
 * after the file), and after each test the spied stdout/stderr restored and the exit code main
 * set cleared, so one test's failure code does not fail the run.
 */
export function cliTestClients(): ReturnType<typeof localClients> {
  const clients = localClients();
  afterAll(() => {
    clients.dynamodb.destroy();
    clients.streams.destroy();
    clients.s3.destroy();
  });
  afterEach(() => {
    vi.restoreAllMocks();
    process.exitCode = undefined;
  });
  return clients;
}
