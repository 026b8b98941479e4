import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startDynamoDbLocal } from '../../../../src/local/servers/dynamodb-local.js';

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
  /Java 17 \(or newer\) JDK.*apt-get install -y openjdk-17-jdk-headless.*brew install openjdk@17/s;

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
    // A JRE: version 17, but `java --list-modules` names no jdk.compiler (the launcher needs it).
    ['openjdk version "17.0.15" 2025-04-15', 'found Java 17 without jdk.compiler'],
  ])('%s: JavaMissingError (%s) naming the fix', async (versionLine, found) => {
    await fakeJava(versionLine);
    const error = await startDynamoDbLocal().catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'JavaMissingError', message: expect.stringMatching(NAMES_THE_FIX) });
    expect((error as Error).message).toContain(found);
  });
});
