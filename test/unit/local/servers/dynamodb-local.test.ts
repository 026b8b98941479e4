import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  LAUNCHER_CLASS,
  launcherClassDirectory,
  startDynamoDbLocal,
} from '../../../../src/local/servers/dynamodb-local.js';

// DynamoDB Local is a Java program: without Java 17+ on PATH it must fail at once, saying how to
// get Java, instead of a JVM error or a start timeout. PATH here holds only what each test puts in.
let bin: string;
let savedPath: string | undefined;
beforeEach(async () => {
  bin = await mkdtemp(join(tmpdir(), 'tidewater-java-'));
  savedPath = process.env.PATH;
  process.env.PATH = bin;
});
afterEach(async () => {
  process.env.PATH = savedPath;
  await rm(bin, { recursive: true, force: true });
});

/** A `java` that only answers `-version`, as the given release would (on stderr). */
async function fakeJava(versionLine: string) {
  const file = join(bin, 'java');
  await writeFile(file, `#!/bin/sh\necho '${versionLine}' >&2\n`);
  await chmod(file, 0o755);
}

const NAMES_THE_FIX =
  /Java 17 \(or newer\) runtime.*a JRE is enough.*apt-get install -y openjdk-17-jre-headless.*brew install openjdk@17/s;

describe('startDynamoDbLocal without a usable Java', () => {
  it('no java on PATH: JavaMissingError naming the fix', async () => {
    await expect(startDynamoDbLocal()).rejects.toMatchObject({
      name: 'JavaMissingError',
      message: expect.stringMatching(NAMES_THE_FIX),
    });
    await expect(startDynamoDbLocal()).rejects.toThrow(/`java` was not found/);
  });

  it.each([
    ['openjdk version "11.0.20" 2023-07-18', 'found Java 11'],
    ['java version "1.8.0_392"', 'found Java 8'],
    ['Unable to locate a Java Runtime.', 'found an unreadable Java version'],
  ])('%s: JavaMissingError (%s) naming the fix', async (versionLine, found) => {
    await fakeJava(versionLine);
    const error = await startDynamoDbLocal().catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'JavaMissingError', message: expect.stringMatching(NAMES_THE_FIX) });
    expect((error as Error).message).toContain(found);
  });
});

// Java 17 runs the launcher compiled at build time (scripts/build-java.js): a JRE is enough, and
// nothing is compiled when DynamoDB Local starts (source-file mode needed a JDK's compiler).
describe('startDynamoDbLocal runs the compiled launcher', () => {
  it('the build put a Java 17 class file of the launcher in dist', async () => {
    const file = join(launcherClassDirectory(), `${LAUNCHER_CLASS}.class`);
    expect(existsSync(file), `${file} (run npm run build)`).toBe(true);
    const bytes = await readFile(file);
    expect(bytes.readUInt32BE(0)).toBe(0xcafebabe);
    expect(bytes.readUInt16BE(6)).toBe(61); // class file major version 61: Java 17
  });

  it('spawns `java -cp <dist class folder>:… LoopbackDynamoDbLocal`, no .java source, under umask 077', async () => {
    // A Java 17 JRE's `java`: answers -version, records how the launcher is run, and exits.
    const recorded = join(bin, 'recorded');
    await writeFile(
      join(bin, 'java'),
      `#!/bin/sh\nif [ "$1" = -version ]; then echo 'openjdk version "17.0.15" 2025-04-15' >&2; exit 0; fi\n` +
        `umask > '${recorded}'\nfor a in "$@"; do echo "$a" >> '${recorded}'; done\nexit 3\n`,
    );
    await chmod(join(bin, 'java'), 0o755);
    await expect(startDynamoDbLocal({ startTimeoutMs: 30_000 })).rejects.toMatchObject({
      name: 'LocalServerStartError',
    });
    const [umask, ...args] = (await readFile(recorded, 'utf8')).trim().split('\n');
    expect(umask).toBe('0077');
    const cp = args.indexOf('-cp');
    expect(args[cp + 1]?.split(':')[0]).toBe(launcherClassDirectory());
    expect(args[cp + 2]).toBe(LAUNCHER_CLASS);
    expect(args.filter((arg) => arg.endsWith('.java'))).toEqual([]);
  });
});
