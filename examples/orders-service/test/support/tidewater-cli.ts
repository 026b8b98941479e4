// `npx tidewater …` in its own process group, as a user runs it; `killWhen` (polled every 20 ms)
// ends it with SIGKILL — npx and the CLI under it at once — to test a resume from a checkpoint.
import { spawn } from 'node:child_process';

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
}

export function tidewaterCli(args: readonly string[], killWhen?: () => boolean): Promise<CliRun> {
  const child = spawn('npx', ['tidewater', ...args], {
    env: process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const timer =
    killWhen &&
    setInterval(() => {
      if (killWhen()) process.kill(-(child.pid as number), 'SIGKILL');
    }, 20);
  return new Promise((resolve) =>
    child.on('close', (code, signal) => {
      if (timer) clearInterval(timer);
      resolve({ code, signal, output });
    }),
  );
}
