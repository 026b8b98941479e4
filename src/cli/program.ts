import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { aggregateCommand } from './aggregate.js';
import { archiveCommand } from './archive.js';
import { backfillCommand } from './backfill.js';
import { captureCommand } from './capture.js';
import { demoCommand } from './demo.js';
import { AwsTargetError } from './errors.js';
import { EXIT } from './exit-codes.js';
import { initCommand } from './init.js';
import { redriveCommand } from './redrive.js';
import { replayCommand } from './replay.js';
import { startCommand } from './start.js';

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

export function createProgram(): Command {
  const program = new Command('tidewater')
    .description(
      'DynamoDB Streams on Lambda, in your serverless service: scaffold (init), run locally (start), capture and ' +
        "replay streams, backfill a table's items, aggregate votes, maintain an archive; `demo` runs tidewater's own demo service.",
    )
    .version(version())
    .showHelpAfterError()
    .exitOverride();
  for (const command of [
    initCommand(),
    startCommand(),
    replayCommand(),
    redriveCommand(),
    captureCommand(),
    aggregateCommand(),
    archiveCommand(),
    backfillCommand(),
    demoCommand(),
  ]) {
    program.addCommand(command.exitOverride().showHelpAfterError());
  }
  return program;
}

/** Runs the CLI; resolves to the exit code instead of exiting, so it can be tested in-process. */
export async function main(argv: readonly string[]): Promise<number> {
  process.exitCode = undefined;
  try {
    await createProgram().parseAsync([...argv], { from: 'user' });
    return Number(process.exitCode ?? EXIT.ok);
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end through here with exit code 0.
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    process.stderr.write(
      `tidewater: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}\n`,
    );
    // Neither local endpoints nor --aws: the command line was incomplete, and nothing was sent.
    return error instanceof AwsTargetError ? EXIT.usage : EXIT.error;
  }
}
