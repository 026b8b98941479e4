#!/usr/bin/env node
// `npm run package`: `osls package` with no AWS access, then a record of the bundle sizes.
//
// osls (the maintained continuation of serverless v3) packages without credentials as long as no variable needs AWS (no ${aws:...},
// ${ssm:...}, ${cf:...}) and no dashboard org/app is set. The environment below makes sure nothing
// else tries: credentials and profiles are removed, instance-metadata lookups are disabled, and
// telemetry, update notifications and interactive setup are off. Extra arguments pass through
// (e.g. `npm run package -- --stage prod`).
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { devNull } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { inflateRawSync } from 'node:zlib';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const packageDir = path.join(root, '.serverless');
const sizesFile = path.join(root, 'bench', '.out', 'bundle-sizes.json');
// The archive's settings rules, the ones the CDK's TtlArchive applies and, for the key prefixes, the
// archive handler at cold start: one module, so `npm run package`, the construct and the deployed
// function cannot disagree on which settings are safe.
// `npm run package` builds dist/ first (package.json), so this is the code the handler runs.
const { archiveRuleProblems } = await import('../dist/handlers/archive-rules.js');

export function offlineEnv(base = process.env) {
  const env = { ...base };
  for (const name of Object.keys(env)) {
    if (
      /^AWS_(ACCESS_KEY_ID|SECRET_ACCESS_KEY|SESSION_TOKEN|PROFILE|DEFAULT_PROFILE|ROLE_ARN|WEB_IDENTITY_TOKEN_FILE|CONTAINER_CREDENTIALS_.*)$/.test(
        name,
      )
    ) {
      delete env[name];
    }
  }
  return {
    ...env,
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_SDK_LOAD_CONFIG: '0',
    // Empty config and credential files: a developer's ~/.aws must not leak into packaging.
    AWS_CONFIG_FILE: devNull,
    AWS_SHARED_CREDENTIALS_FILE: devNull,
    SLS_TELEMETRY_DISABLED: '1',
    SLS_TRACKING_DISABLED: '1',
    SLS_NOTIFICATIONS_MODE: 'off',
    SLS_INTERACTIVE_SETUP_DISABLE: '1',
    SLS_DEPRECATION_DISABLE: '*',
    CI: env.CI ?? '1',
  };
}

/** A file is not a zip this reader can read (no end record, a broken directory or header). */
export class ZipFormatError extends Error {
  name = 'ZipFormatError';
}

// Signatures and fixed sizes from PKWARE's APPNOTE (4.3.7 local header, 4.3.12 central directory
// header, 4.3.16 end of central directory record). ZIP64 is not read: bundles are far below 4 GiB.
const LOCAL_HEADER = { signature: 0x04034b50, size: 30 };
const CENTRAL_HEADER = { signature: 0x02014b50, size: 46 };
const END_RECORD = { signature: 0x06054b50, size: 22, maxComment: 0xffff };

/**
 * The entries of a zip, read from its central directory: name, uncompressed and compressed size,
 * compression method (0 stored, 8 deflated) and the offset of its local header (see zipEntryData).
 */
export function zipEntries(buffer) {
  // The end record is the last thing in the file but for its comment (at most 64 KiB), which may
  // itself contain the signature's bytes: only a record whose comment length reaches exactly the
  // end of the file is the real one.
  let eocd = -1;
  const lowest = Math.max(0, buffer.length - END_RECORD.size - END_RECORD.maxComment);
  for (let i = buffer.length - END_RECORD.size; i >= lowest; i--) {
    if (
      buffer.readUInt32LE(i) === END_RECORD.signature &&
      i + END_RECORD.size + buffer.readUInt16LE(i + 20) === buffer.length
    ) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new ZipFormatError('not a zip file (no end-of-central-directory record)');
  const count = buffer.readUInt16LE(eocd + 10);
  let offset = buffer.readUInt32LE(eocd + 16);
  const entries = [];
  for (let n = 0; n < count; n++) {
    if (offset + CENTRAL_HEADER.size > eocd || buffer.readUInt32LE(offset) !== CENTRAL_HEADER.signature) {
      throw new ZipFormatError('corrupt zip central directory');
    }
    const method = buffer.readUInt16LE(offset + 10);
    const compressedSize = buffer.readUInt32LE(offset + 20);
    const size = buffer.readUInt32LE(offset + 24);
    const nameLength = buffer.readUInt16LE(offset + 28);
    const extraLength = buffer.readUInt16LE(offset + 30);
    const commentLength = buffer.readUInt16LE(offset + 32);
    const localHeaderOffset = buffer.readUInt32LE(offset + 42);
    const nameStart = offset + CENTRAL_HEADER.size;
    if (nameStart + nameLength > eocd) throw new ZipFormatError('corrupt zip central directory');
    const name = buffer.toString('utf8', nameStart, nameStart + nameLength);
    entries.push({ name, size, compressedSize, method, localHeaderOffset });
    offset = nameStart + nameLength + extraLength + commentLength;
  }
  return entries;
}

/** The uncompressed bytes of one entry listed by zipEntries (stored or deflated). */
export function zipEntryData(buffer, entry) {
  const header = entry.localHeaderOffset;
  if (header + LOCAL_HEADER.size > buffer.length || buffer.readUInt32LE(header) !== LOCAL_HEADER.signature) {
    throw new ZipFormatError(`${entry.name}: no local file header at offset ${header}`);
  }
  // The local header's name and extra field may differ in length from the central directory's.
  const start =
    header + LOCAL_HEADER.size + buffer.readUInt16LE(header + 26) + buffer.readUInt16LE(header + 28);
  if (start + entry.compressedSize > buffer.length) {
    throw new ZipFormatError(`${entry.name}: data runs past the end of the file`);
  }
  const data = buffer.subarray(start, start + entry.compressedSize);
  if (entry.method === 0) return Buffer.from(data);
  if (entry.method === 8) return inflateRawSync(data);
  throw new ZipFormatError(`${entry.name}: compression method ${entry.method} is not supported`);
}

/** Zip size and, per function, the unzipped size of its code (.mjs) and source map. */
export function bundleSizes(dir = packageDir) {
  const functions = {};
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.zip'))
    .sort()) {
    const zip = readFileSync(path.join(dir, file));
    const entries = zipEntries(zip);
    const code = entries.filter((e) => e.name.endsWith('.mjs'));
    const maps = entries.filter((e) => e.name.endsWith('.map'));
    functions[file.slice(0, -'.zip'.length)] = {
      zipBytes: statSync(path.join(dir, file)).size,
      codeBytes: code.reduce((sum, e) => sum + e.size, 0),
      sourceMapBytes: maps.reduce((sum, e) => sum + e.size, 0),
      entries: entries.map((e) => e.name),
    };
  }
  return functions;
}

// Same rule as src/votes/options.ts (POLL_ID_PATTERN): the aggregator's IAM condition is
// dynamodb:LeadingKeys StringLike POLL#<poll>#*, where `*` and `?` in the poll id are wildcards.
const POLL_ID_PATTERN = /^[A-Za-z0-9._-]+$/;
// EventBridge's rate(): a singular unit for 1, plural above (`rate(1 minutes)` fails the deploy).
const RATE_PATTERN = /^rate\((?:1 (?:minute|hour|day)|(?:[2-9]|[1-9][0-9]+) (?:minutes|hours|days))\)$/;

const isWholeNumber = (value, min) => Number.isInteger(value) && value >= min;

function aggregatorProblems(resources) {
  const env = resources.AggregateVotesLambdaFunction?.Properties?.Environment?.Variables;
  if (env === undefined) return ['AggregateVotesLambdaFunction has no environment'];
  const problems = [];
  if (typeof env.POLL !== 'string' || !POLL_ID_PATTERN.test(env.POLL)) {
    problems.push(
      `poll (TIDEWATER_POLL) is ${JSON.stringify(env.POLL)}; it must match ${POLL_ID_PATTERN.source}, ` +
        'since `*` or `?` would let the aggregator role reach every poll in the table',
    );
  }
  for (const name of ['SHARDS', 'REGISTRY_PARTITIONS']) {
    if (!isWholeNumber(Number(env[name]), 1)) {
      problems.push(
        `${name} is ${JSON.stringify(env[name])}; voteShards / registryPartitions must be positive integers`,
      );
    }
  }
  const schedules = Object.entries(resources).filter(([, r]) => r?.Type === 'AWS::Events::Rule');
  for (const [id, rule] of schedules) {
    const expression = rule.Properties?.ScheduleExpression;
    if (typeof expression !== 'string' || !RATE_PATTERN.test(expression)) {
      // serverless names a function's schedule rule after the function (CompactArchiveEventsRuleSchedule1).
      const setting = id.startsWith('CompactArchive')
        ? 'compactRate (TIDEWATER_COMPACT_RATE)'
        : 'aggregateRate (TIDEWATER_AGGREGATE_RATE)';
      problems.push(
        `${setting} gives ${JSON.stringify(expression)}; EventBridge expects e.g. rate(1 minute) or rate(5 minutes)`,
      );
    }
  }
  return problems;
}

// How infra/settings.yml names what the archive rules check.
const ARCHIVE_SETTING_NAMES = {
  archivePrefix: 'archivePrefix',
  deadLetterPrefix: 'deadLetterPrefix',
  storageClass: 'storageClass',
  glacierAfterDays: 'glacierAfterDays',
  deepArchiveAfterDays: 'deepArchiveAfterDays',
  noncurrentExpireAfterDays: 'noncurrentExpireAfterDays',
  deadLetterAfterAge: 'deadLetterAfterAgeSeconds',
  maxRecordAge: "the stream mapping's maximumRecordAgeInSeconds",
  closedAfter: 'compactAfterSeconds',
  lookbackHours: 'compactLookbackHours',
};

/** The archive's settings, read back from the functions' environments and the bucket's lifecycle. */
function archiveProblems(resources) {
  const variables = (id) => resources[id]?.Properties?.Environment?.Variables;
  const archive = variables('ArchiveTtlLambdaFunction');
  const compaction = variables('CompactArchiveLambdaFunction');
  const rules = resources.ArchiveBucket?.Properties?.LifecycleConfiguration?.Rules ?? [];
  const rule = rules.find((r) => r?.Id === 'archive-to-glacier');
  const missing = [];
  if (archive === undefined) missing.push('ArchiveTtlLambdaFunction has no environment');
  else if (rule === undefined) missing.push('ArchiveBucket has no archive-to-glacier lifecycle rule');
  if (compaction === undefined) missing.push('CompactArchiveLambdaFunction has no environment');
  if (archive === undefined) return missing;
  const days = (list, storageClass) => list?.find((t) => t?.StorageClass === storageClass)?.TransitionInDays;
  const mappings = Object.values(resources).filter((r) => r?.Type === 'AWS::Lambda::EventSourceMapping');
  const maxAge = Math.max(0, ...mappings.map((m) => Number(m.Properties?.MaximumRecordAgeInSeconds) || 0));
  const problems = archiveRuleProblems(
    {
      archivePrefix: archive.ARCHIVE_PREFIX,
      deadLetterPrefix: archive.DEAD_LETTER_OVERFLOW_PREFIX,
      lifecycle:
        rule === undefined
          ? undefined
          : {
              glacierAfterDays: days(rule.Transitions, 'GLACIER'),
              deepArchiveAfterDays: days(rule.Transitions, 'DEEP_ARCHIVE'),
              noncurrentGlacierAfterDays: days(rule.NoncurrentVersionTransitions, 'GLACIER'),
              noncurrentExpireAfterDays: rule.NoncurrentVersionExpiration?.NoncurrentDays,
            },
      deadLetterAfterAgeSeconds: archive.MAX_RECORD_AGE_SECONDS,
      // A mapping whose records never age out (-1) leaves nothing to compare against.
      maxRecordAgeSeconds: maxAge > 0 ? maxAge : undefined,
      compaction:
        compaction === undefined
          ? undefined
          : {
              storageClass: compaction.STORAGE_CLASS,
              closedAfterSeconds: compaction.COMPACT_AFTER_SECONDS,
              lookbackHours: compaction.COMPACT_LOOKBACK_HOURS,
            },
    },
    ARCHIVE_SETTING_NAMES,
  );
  return [...missing, ...problems];
}

// The settings infra/parameters.yml turns into stack parameters, by parameter: what to name.
const PARAMETER_SETTINGS = {
  KmsKeyArn: 'kmsKeyArn (TIDEWATER_KMS_KEY_ARN)',
  ArchiveBucketName: 'bucketName (TIDEWATER_BUCKET_NAME)',
  ArchiveSource: 'archiveSource (TIDEWATER_ARCHIVE_SOURCE)',
  ArchiveQueryTables: 'queryTables (TIDEWATER_QUERY_TABLES)',
  ArchiveRoutes: 'archiveRoutes (TIDEWATER_ARCHIVE_ROUTES)',
};

/**
 * A parameter's Default is the setting, and CloudFormation refuses a stack whose parameter breaks
 * its AllowedValues / AllowedPattern only at deploy time. Here it fails the package instead: an
 * archiveSource other than the two would otherwise create neither trigger.
 */
function parameterProblems(parameters) {
  const problems = [];
  for (const [name, parameter] of Object.entries(parameters ?? {})) {
    const value = parameter?.Default;
    const setting = PARAMETER_SETTINGS[name] ?? `parameter ${name}`;
    if (Array.isArray(parameter?.AllowedValues) && !parameter.AllowedValues.includes(value)) {
      problems.push(
        `${setting} is ${JSON.stringify(value)}; it must be one of ${parameter.AllowedValues.map((v) => JSON.stringify(v)).join(', ')}`,
      );
    }
    if (
      typeof parameter?.AllowedPattern === 'string' &&
      !new RegExp(parameter.AllowedPattern).test(String(value))
    ) {
      problems.push(
        `${setting} is ${JSON.stringify(value)}; it must be ${parameter.ConstraintDescription ?? `like ${parameter.AllowedPattern}`}`,
      );
    }
  }
  return problems;
}

/**
 * Settings problems that serverless cannot see but that would deploy a wrong stack, or a wider
 * grant than meant: one message per problem found in the packaged CloudFormation template (empty
 * when fine).
 */
export function templateProblems(template) {
  const resources = template?.Resources ?? {};
  return [
    ...parameterProblems(template?.Parameters),
    ...aggregatorProblems(resources),
    ...archiveProblems(resources),
  ];
}

/** The folder `serverless package` writes to: `--package <dir>` / `-p <dir>`, else .serverless. */
function outputDir(args) {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--package' || args[i] === '-p') return path.resolve(root, args[i + 1] ?? '');
    if (args[i]?.startsWith('--package=')) return path.resolve(root, args[i].slice('--package='.length));
  }
  return packageDir;
}

function main(args) {
  const osls = path.join(root, 'node_modules', 'osls', 'bin', 'serverless.js');
  const result = spawnSync(process.execPath, [osls, 'package', ...args], {
    cwd: root,
    env: offlineEnv(),
    stdio: 'inherit',
  });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    process.exitCode = result.status ?? 1;
    return;
  }
  const dir = outputDir(args);
  const template = JSON.parse(
    readFileSync(path.join(dir, 'cloudformation-template-update-stack.json'), 'utf8'),
  );
  const problems = templateProblems(template);
  if (problems.length > 0) {
    for (const problem of problems) console.error(`infra/settings.yml: ${problem}`);
    process.exitCode = 1;
    return;
  }
  const functions = bundleSizes(dir);
  for (const [name, size] of Object.entries(functions)) {
    console.log(`${name}: ${size.codeBytes} bytes of code, ${size.zipBytes} bytes zipped`);
  }
  // Only the default package is the one the benchmarks report.
  if (dir === packageDir) {
    mkdirSync(path.dirname(sizesFile), { recursive: true });
    writeFileSync(
      sizesFile,
      `${JSON.stringify({ packagedAt: new Date().toISOString(), functions }, null, 2)}\n`,
    );
    console.log(`bundle sizes written to ${path.relative(root, sizesFile)}`);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2));
}
