#!/usr/bin/env node
// Every code block of README.md and docs/*.md is checked, so that a renamed option, a wrong entry
// point or a type that no longer fits fails CI instead of a reader.
//
// What a block gets depends on its language and on an optional directive: an HTML comment right
// before the block (only blank lines between), which GitHub does not render.
//
//   <!-- docs-check: run                           first line: flags
//   import { streamEvents } from 'tidewater/testing';   further lines: the prelude, TypeScript
//   const event = streamEvents().event();              put before the block (imports, `declare`s
//   -->                                                 or real values for its free names)
//   ```ts
//   …
//   ```
//   <!-- docs-check-after:                          optional, right after the block: the epilogue,
//   expect(…);                                      TypeScript put after it (assertions)
//   -->
//
// A ts/js block takes no prelude: blocks are what readers paste, so each must compile as copied,
// with what it needs shown in it (a json/yaml block run on its parsed value may have one).
//
// Flags: `run` (the block is also executed, by vitest, once compiled), `test` (the block is itself
// a vitest test file: it(…), runSinkTestKit(…)), `name: <id>` (its module is docs-check/<doc>-<id>.ts,
// also reachable as ./<id>.js, the file a reader would save it as, for other blocks to import), `paths` (a plain block whose path-like words must exist in
// the repository), `skip: <reason>` (not checked; the reason is printed).
//
// - ts / typescript: one module per block in <consumer>/docs-check/, named by file and line
//   (docs-sinks-L160.ts); the block's lines keep their markdown line numbers there, so a tsc error
//   at docs-sinks-L160.ts(163,5) is docs/sinks.md line 163. The consumer copy's tsc compiles them
//   against the installed tarball; `run` blocks are imported by a generated vitest test
//   (<module>.run.test.ts), `test` blocks are vitest test files (<module>.test.ts).
// - json: JSON.parse. yaml: js-yaml, with CloudFormation's short tags (!Ref, !GetAtt, …). With
//   `run`, the parsed value (a YAML stream of several documents: their array) is `parsed` in a
//   module with the prelude and epilogue, executed.
// - sh: every command is checked: `npm run x` / `npm test` name a script of package.json,
//   `tidewater <cmd> --flag` a command and flag of the built CLI (its --help, read at check time),
//   `npm install` names packages package-lock.json knows at tidewater's peer ranges, `npx x` a bin
//   of node_modules/.bin. Any other command fails: mark such a block `skip: <reason>`.
// - anything else (sql, text, a block without a language) must be marked `skip` or `paths`; an
//   unmarked one fails the check.
//
// `node scripts/docs-snippets.js` checks and prints the summary (TypeScript is only generated, not
// compiled); `--out <dir>` writes the modules. scripts/consumer-test.js runs it into the consumer
// copy before `npm install` / `npm test`.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import yaml from 'js-yaml';
import ts from 'typescript';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** One or more blocks failed the check; `problems` holds one line per failure, with file:line. */
export class DocsCheckError extends Error {
  name = 'DocsCheckError';
  /** @param {string[]} problems */
  constructor(problems) {
    super(`docs check failed (${problems.length}):\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.problems = problems;
  }
}

const LANGS = {
  ts: new Set(['ts', 'typescript', 'mts']),
  js: new Set(['js', 'javascript', 'mjs']),
  json: new Set(['json']),
  yaml: new Set(['yaml', 'yml']),
  sh: new Set(['sh', 'bash', 'shell']),
};

/** The markdown files checked: README.md and docs/*.md, relative to `root`. */
export function docFiles(root = repoRoot) {
  const docs = existsSync(path.join(root, 'docs'))
    ? readdirSync(path.join(root, 'docs'))
        .filter((name) => name.endsWith('.md'))
        .sort()
        .map((name) => `docs/${name}`)
    : [];
  return [...(existsSync(path.join(root, 'README.md')) ? ['README.md'] : []), ...docs];
}

/**
 * Parses a directive comment's text (between `<!--` and `-->`).
 * @param {string} text
 * @param {string} where
 * @param {string[]} problems
 */
export function parseDirective(text, where, problems) {
  const [first = '', ...rest] = text.split('\n');
  const directive = { run: false, test: false, paths: false, skip: undefined, name: undefined, prelude: '' };
  const head = /^\s*docs-check\s*:(.*)$/.exec(first);
  if (!head) {
    problems.push(`${where}: a docs-check comment starts with "docs-check:" (flags on the first line)`);
    return directive;
  }
  let flags = head[1].trim();
  while (flags) {
    let match = /^skip\s*:\s*(.*)$/.exec(flags);
    if (match) {
      directive.skip = match[1].trim();
      if (!directive.skip)
        problems.push(`${where}: skip needs a reason ("skip: <why this block is not checked>")`);
      break;
    }
    match = /^name\s*:\s*([a-z0-9][a-z0-9-]*)\s*(.*)$/i.exec(flags);
    if (match) {
      directive.name = match[1];
      flags = match[2];
      continue;
    }
    match = /^(run|test|paths)(?:\s+|$)(.*)$/.exec(flags);
    if (match) {
      directive[/** @type {'run' | 'test' | 'paths'} */ (match[1])] = true;
      flags = match[2];
      continue;
    }
    problems.push(
      `${where}: unknown docs-check flag "${flags}" (run, test, paths, name: <id>, skip: <reason>)`,
    );
    break;
  }
  directive.prelude = trimBlankLines(rest).join('\n');
  return directive;
}

/** @param {string[]} lines */
function trimBlankLines(lines) {
  let start = 0;
  let end = lines.length;
  while (start < end && lines[start].trim() === '') start++;
  while (end > start && lines[end - 1].trim() === '') end--;
  return lines.slice(start, end);
}

/**
 * Finds the fenced code blocks of a markdown text, with the docs-check comments around them.
 * @param {string} markdown
 * @param {string} file  the name used in messages and module names (e.g. docs/sinks.md)
 */
export function extractBlocks(markdown, file) {
  const lines = markdown.split(/\r?\n/);
  const blocks = [];
  const problems = [];
  let pending; // a directive waiting for its block
  let last; // the block just closed, while only blank lines follow it
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = /^(\s*)(`{3,}|~{3,})(.*)$/.exec(line);
    if (fence && !(fence[2][0] === '`' && fence[3].includes('`'))) {
      const [, indent, marker, rawInfo] = fence;
      const close = new RegExp(`^\\s*${marker[0] === '`' ? '`' : '~'}{${marker.length},}\\s*$`);
      const body = [];
      let j = i + 1;
      for (; j < lines.length && !close.test(lines[j]); j++) {
        // Content is indented like its fence (a block inside a list item): strip that much.
        const content = lines[j];
        const strip = Math.min(indent.length, /^\s*/.exec(content)[0].length);
        body.push(content.slice(strip));
      }
      const where = `${file}:${i + 1}`;
      if (j === lines.length) problems.push(`${where}: the code block is never closed`);
      const info = rawInfo.trim();
      const [lang = '', ...extra] = info.split(/\s+/).filter(Boolean);
      if (extra.length > 0)
        problems.push(
          `${where}: info string "${info}": only the language is read; say more in a docs-check comment`,
        );
      const block = {
        file,
        line: i + 1,
        where,
        lang: lang.toLowerCase(),
        code: body.join('\n'),
        lineCount: body.length,
        directive: pending?.directive,
        epilogue: '',
      };
      blocks.push(block);
      pending = undefined;
      last = block;
      i = j;
      continue;
    }
    if (/^\s*<!--\s*docs-check/.test(line)) {
      let j = i;
      while (!lines[j].includes('-->') && j + 1 < lines.length) j++;
      const where = `${file}:${i + 1}`;
      if (!lines[j].includes('-->')) {
        problems.push(`${where}: the docs-check comment is never closed (-->)`);
        break;
      }
      const text = lines
        .slice(i, j + 1)
        .join('\n')
        .replace(/^\s*<!--/, '')
        .replace(/-->\s*$/, '');
      if (/^\s*docs-check-after\s*:/.test(text)) {
        if (!last) problems.push(`${where}: a docs-check-after comment must follow a code block directly`);
        else if (last.epilogue)
          problems.push(`${where}: a second docs-check-after comment for ${last.where}`);
        else
          last.epilogue = trimBlankLines(text.replace(/^\s*docs-check-after\s*:/, '').split('\n')).join('\n');
      } else {
        if (pending) problems.push(`${pending.where}: a docs-check comment is not followed by a code block`);
        pending = { where, directive: parseDirective(text, where, problems) };
        last = undefined;
      }
      i = j;
      continue;
    }
    if (line.trim() !== '') {
      if (pending) problems.push(`${pending.where}: a docs-check comment is not followed by a code block`);
      pending = undefined;
      last = undefined;
    }
  }
  if (pending) problems.push(`${pending.where}: a docs-check comment is not followed by a code block`);
  return { blocks, problems };
}

/**
 * What is done with a block: `compile`, `run`, `test` (ts/js), `parse` (json/yaml; `run` with an
 * epilogue), `check` (sh), `paths`, `skip`. Returns `problem` for a block nothing may be done with.
 */
export function classify(block) {
  const d = block.directive ?? {};
  const kind = Object.keys(LANGS).find((k) => LANGS[k].has(block.lang)) ?? 'other';
  const misplaced = (flag, reason) => ({
    kind,
    action: 'invalid',
    problem: `${block.where}: ${flag} ${reason}`,
  });
  if (d.skip !== undefined) {
    if (d.run || d.test || d.paths || d.name || d.prelude || block.epilogue)
      return misplaced('skip', 'goes alone: a skipped block has no other flags, prelude or epilogue');
    return { kind, action: 'skip', reason: d.skip };
  }
  if (d.run && d.test) return misplaced('run', 'and test exclude each other (a test block runs anyway)');
  if (kind === 'ts' || kind === 'js') {
    if (d.paths) return misplaced('paths', `is for plain text blocks, not ${block.lang}`);
    return { kind, action: d.test ? 'test' : d.run ? 'run' : 'compile' };
  }
  if (d.name) return misplaced('name', 'is for ts/js blocks');
  if (kind === 'json' || kind === 'yaml') {
    if (d.test || d.paths) return misplaced(d.test ? 'test' : 'paths', `does not apply to ${block.lang}`);
    if ((d.prelude || block.epilogue) && !d.run)
      return misplaced(
        'a prelude or epilogue',
        `on a ${block.lang} block needs run (it is TypeScript run on the parsed value)`,
      );
    return { kind, action: d.run ? 'run' : 'parse' };
  }
  if (d.run || d.test)
    return misplaced(d.run ? 'run' : 'test', `does not apply to ${block.lang || 'a plain'} block`);
  if (d.prelude || block.epilogue) return misplaced('a prelude or epilogue', 'is for ts/js blocks');
  if (kind === 'sh') {
    if (d.paths) return misplaced('paths', 'is for plain text blocks');
    return { kind, action: 'check' };
  }
  if (d.paths) return { kind, action: 'paths' };
  return {
    kind,
    action: 'invalid',
    problem:
      `${block.where}: a ${block.lang ? `\`${block.lang}\`` : 'plain (no language)'} block is not checked and not marked: ` +
      'add <!-- docs-check: skip: <reason> --> before it (or paths, for a list of repository paths)',
  };
}

// CloudFormation's short-form tags, read as their long form (as serverless and the local runtime do).
const CFN_FUNCTIONS = [
  'Base64',
  'Cidr',
  'FindInMap',
  'GetAtt',
  'GetAZs',
  'ImportValue',
  'Join',
  'Select',
  'Split',
];
const CFN_CONDITIONS = ['And', 'Equals', 'If', 'Not', 'Or'];
const CFN_SCHEMA = yaml.DEFAULT_SCHEMA.extend(
  [
    ...['Ref', 'Condition'].map((name) => [name, name]),
    ...[...CFN_FUNCTIONS, ...CFN_CONDITIONS, 'Sub', 'Transform'].map((name) => [name, `Fn::${name}`]),
  ].flatMap(([tag, key]) =>
    ['scalar', 'sequence', 'mapping'].map(
      (kind) =>
        new yaml.Type(`!${tag}`, {
          kind,
          construct: (data) => ({
            [key]: tag === 'GetAtt' && typeof data === 'string' ? data.split('.') : data,
          }),
        }),
    ),
  ),
);

/** @param {string} code @returns {unknown[]} every document of the YAML text */
export function parseYaml(code) {
  return yaml.loadAll(code, null, { schema: CFN_SCHEMA });
}

/**
 * Splits one shell line into commands (at &&, ||, |, ;) of words, quotes removed; stops at a comment.
 * @param {string} line
 * @returns {string[][]}
 */
export function shellCommands(line) {
  const commands = [[]];
  let word;
  const end = () => {
    if (word !== undefined) commands[commands.length - 1].push(word);
    word = undefined;
  };
  for (let i = 0; i < line.length; ) {
    const c = line[i];
    if (c === "'") {
      const close = line.indexOf("'", i + 1);
      if (close < 0) throw new Error(`unclosed ' in: ${line}`);
      word = (word ?? '') + line.slice(i + 1, close);
      i = close + 1;
    } else if (c === '"') {
      let j = i + 1;
      let text = '';
      for (; j < line.length && line[j] !== '"'; j++) text += line[j] === '\\' ? line[++j] : line[j];
      if (j >= line.length) throw new Error(`unclosed " in: ${line}`);
      word = (word ?? '') + text;
      i = j + 1;
    } else if (c === '\\' && i + 1 < line.length) {
      word = (word ?? '') + line[i + 1];
      i += 2;
    } else if (/\s/.test(c)) {
      end();
      i++;
    } else if (c === '#' && word === undefined) {
      break;
    } else if (c === ';' || c === '|' || (c === '&' && line[i + 1] === '&')) {
      end();
      commands.push([]);
      i += (c === '|' || c === '&') && line[i + 1] === c ? 2 : 1;
    } else {
      word = (word ?? '') + c;
      i++;
    }
  }
  end();
  return commands.filter((command) => command.length > 0);
}

/**
 * The names listed in one section ("Commands:", "Options:") of commander's --help text.
 * @param {string} help
 * @param {'Commands' | 'Options'} section
 */
export function helpEntries(help, section) {
  const lines = help.split('\n');
  const start = lines.findIndex((line) => line.trim() === `${section}:`);
  const names = new Set();
  if (start < 0) return names;
  for (const line of lines.slice(start + 1)) {
    if (/^\S/.test(line)) break; // the next section
    const entry = /^ {2}(\S.*?)(?: {2,}|$)/.exec(line);
    if (!entry) continue; // a description's continuation line
    if (section === 'Commands') names.add(entry[1].split(/\s/)[0]);
    else for (const flag of entry[1].matchAll(/(?:^|[\s,])(--?[A-Za-z][\w-]*)/g)) names.add(flag[1]);
  }
  return names;
}

/**
 * Checks every command of a sh block. `env`: { packageJson, lockPackages: Set, bins: Set,
 * exists(relativePath): boolean, cliHelp(args: string[]): string }.
 * @returns {string[]} problems, without the file:line prefix
 */
export function checkShell(code, env) {
  const problems = [];
  const logical = code.replace(/\\\n/g, ' ').split('\n');
  for (const line of logical) {
    let commands;
    try {
      commands = shellCommands(line);
    } catch (error) {
      problems.push(error.message);
      continue;
    }
    for (const words of commands) {
      // Leading NAME=value assignments set the environment of the command after them.
      const start = words.findIndex((w) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w));
      if (start < 0) continue;
      const command = words.slice(start);
      problems.push(...checkCommand(command, env).map((p) => `\`${command.join(' ')}\`: ${p}`));
    }
  }
  return problems;
}

function checkCommand([program, ...args], env) {
  const scripts = env.packageJson.scripts ?? {};
  const script = (name) => (name in scripts ? [] : [`package.json has no script "${name}"`]);
  switch (program) {
    case 'npm': {
      const [sub, ...rest] = args;
      if (['install', 'i', 'add'].includes(sub)) return checkInstall(rest, env);
      if (sub === 'ci') return [];
      if (['start', 'test', 'stop', 'restart'].includes(sub)) return script(sub);
      if (sub === 'run' || sub === 'run-script') {
        const name = rest.find((w) => !w.startsWith('-'));
        return name ? script(name) : ['npm run without a script name'];
      }
      return [`npm ${sub}: not a command this check knows; mark the block skip with a reason`];
    }
    case 'npx': {
      const at = args.findIndex((w) => !w.startsWith('-'));
      if (at < 0) return ['npx without a command'];
      return checkBin(args[at], args.slice(at + 1), env);
    }
    case 'node': {
      if (args[0] === 'dist/cli/bin.js') return checkCli(args.slice(1), env);
      const file = args.find((w) => !w.startsWith('-'));
      return file && env.exists(file) ? [] : [`node ${file ?? ''}: no such file in the repository`];
    }
    default:
      return checkBin(program, args, env, false);
  }
}

function checkBin(bin, args, env, viaNpx = true) {
  if (bin === 'tidewater' || bin === env.packageJson.name) return checkCli(args, env);
  if (viaNpx && env.bins.has(bin)) return []; // its arguments are its own business
  return [
    viaNpx
      ? `npx ${bin}: no such bin in node_modules/.bin`
      : `${bin}: a command this check cannot verify; mark the block skip with a reason`,
  ];
}

function checkCli(args, env) {
  const [command, ...rest] = args;
  if (command === undefined || command.startsWith('-'))
    return checkFlags(args, helpEntries(env.cliHelp([]), 'Options'), 'tidewater');
  const commands = helpEntries(env.cliHelp([]), 'Commands');
  if (!commands.has(command))
    return [`tidewater has no command "${command}" (its --help lists: ${[...commands].join(', ')})`];
  // A command with subcommands (`tidewater archive compact …`): the flags are the subcommand's.
  const subcommands = helpEntries(env.cliHelp([command]), 'Commands');
  const [sub, ...subRest] = rest;
  if (subcommands.size > 0 && sub !== undefined && !sub.startsWith('-')) {
    if (!subcommands.has(sub))
      return [
        `tidewater ${command} has no command "${sub}" (its --help lists: ${[...subcommands].join(', ')})`,
      ];
    return checkFlags(
      subRest,
      helpEntries(env.cliHelp([command, sub]), 'Options'),
      `tidewater ${command} ${sub}`,
    );
  }
  return checkFlags(rest, helpEntries(env.cliHelp([command]), 'Options'), `tidewater ${command}`);
}

function checkFlags(args, options, who) {
  const problems = [];
  for (const arg of args) {
    if (arg === '--') break;
    if (!arg.startsWith('-') || arg === '-') continue;
    const name = arg.split('=')[0];
    const flags = /^-[A-Za-z]{2,}$/.test(name) ? [...name.slice(1)].map((c) => `-${c}`) : [name];
    for (const flag of flags)
      if (!options.has(flag))
        problems.push(`${who} has no option ${flag} (--help lists ${[...options].join(' ')})`);
  }
  return problems;
}

function checkInstall(args, env) {
  const problems = [];
  const peers = env.packageJson.peerDependencies ?? {};
  for (const spec of args.filter((w) => !w.startsWith('-'))) {
    const at = spec.lastIndexOf('@');
    const name = at > 0 ? spec.slice(0, at) : spec;
    const range = at > 0 ? spec.slice(at + 1) : undefined;
    if (name === env.packageJson.name) continue;
    if (name in peers) {
      if (range !== undefined && range !== peers[name])
        problems.push(`${spec}: tidewater's peerDependencies ask for ${name}@${peers[name]}`);
    } else if (!env.lockPackages.has(name)) {
      problems.push(`${name}: not a package package-lock.json knows`);
    }
  }
  return problems;
}

/** @param {string} code */
export function checkPaths(code, exists) {
  const problems = [];
  for (const word of code.split(/\s+/))
    if (/^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]*)+$/.test(word) && !exists(word))
      problems.push(`${word}: no such path in the repository`);
  return problems;
}

/** The module name of a block: docs/sinks.md:160 → docs-sinks-L160 (or docs-sinks-<name>). */
export function moduleBase(block) {
  const doc = block.file
    .replace(/\.md$/i, '')
    .replace(/[^A-Za-z0-9]+/g, '-')
    .toLowerCase();
  return `${doc}-${block.directive?.name ?? `L${block.line}`}`;
}

/**
 * The module text of a ts/js block (or of a json/yaml block run on its parsed value). The block's
 * lines sit at their markdown line numbers when the header and prelude fit above them.
 */
export function renderModule(block, parsedValue) {
  const prelude = block.directive?.prelude ? block.directive.prelude.split('\n') : [];
  const code =
    parsedValue === undefined
      ? block.code.split('\n')
      : [`const parsed: any = ${JSON.stringify(parsedValue)}; // the ${block.lang} block, parsed`];
  const firstCodeLine = block.line + 1;
  const fits = parsedValue === undefined && 1 + prelude.length < firstCodeLine;
  const header =
    `// ${block.where}, generated by scripts/docs-snippets.js: ` +
    (fits
      ? 'line numbers are the markdown file’s'
      : `markdown line ${firstCodeLine} is line ${prelude.length + 2} here`);
  const padding = fits ? Array(firstCodeLine - 2 - prelude.length).fill('') : [];
  const epilogue = block.epilogue ? ['// docs-check-after:', ...block.epilogue.split('\n')] : [];
  return [header, ...prelude, ...padding, ...code, ...epilogue, 'export {};', ''].join('\n');
}

/** The vitest test that runs a `run` block: importing its module runs it. */
export function renderRunner(block, moduleFile) {
  const specifier = `./${moduleFile.replace(/\.ts$/, '.js')}`;
  return [
    `// ${block.where} run by scripts/docs-snippets.js: importing the module runs the block.`,
    "import { it } from 'vitest';",
    '',
    `it(${JSON.stringify(`${block.where} runs`)}, async () => {`,
    `  await import(${JSON.stringify(specifier)});`,
    '});',
    '',
  ].join('\n');
}

/** Package names of the bare imports of a module text (node: and built-ins excepted). */
export function importedPackages(text) {
  const builtins = new Set(builtinModules);
  const names = new Set();
  for (const { fileName } of ts.preProcessFile(text, true, true).importedFiles) {
    if (fileName.startsWith('.') || fileName.startsWith('/') || fileName.startsWith('node:')) continue;
    const parts = fileName.split('/');
    const name = fileName.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
    if (!builtins.has(name)) names.add(name);
  }
  return names;
}

/**
 * The devDependencies a consumer copy needs for the docs' imports: those its package.json lacks,
 * at the ranges of the repository's package.json (a types-only import such as 'aws-lambda' is
 * its @types package).
 */
export function docsDependencies(imports, packageJson, consumerJson) {
  const known = {
    ...packageJson.peerDependencies,
    ...packageJson.devDependencies,
    ...packageJson.dependencies,
  };
  const has = {
    ...consumerJson.dependencies,
    ...consumerJson.devDependencies,
    ...consumerJson.peerDependencies,
  };
  const add = {};
  const problems = [];
  for (const [name, where] of imports) {
    if (name === packageJson.name || name in has) continue;
    const types = `@types/${name.replace(/^@(.*)\/(.*)$/, '$1__$2')}`;
    const dependency = name in known ? name : types in known ? types : undefined;
    if (dependency === undefined) {
      problems.push(`${where}: imports ${name}, which neither the repository nor the consumer depends on`);
    } else if (!(dependency in has)) {
      add[dependency] = known[dependency];
    }
  }
  return { add, problems };
}

function defaultCliHelp(root) {
  const cache = new Map();
  const bin = path.join(root, 'dist', 'cli', 'bin.js');
  return (args) => {
    const key = args.join(' ');
    if (!cache.has(key)) {
      if (!existsSync(bin)) throw new Error(`${path.relative(root, bin)} is missing: npm run build first`);
      const result = spawnSync(process.execPath, [bin, ...args, '--help'], { encoding: 'utf8' });
      if (result.status !== 0)
        throw new Error(`node dist/cli/bin.js ${key} --help exited ${result.status}: ${result.stderr}`);
      cache.set(key, result.stdout);
    }
    return cache.get(key);
  };
}

function readJson(file, fallback) {
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : fallback;
}

/**
 * Checks every block of the docs and, given `outDir`, writes the TypeScript modules (removing what
 * was there). Throws DocsCheckError listing every problem; returns the summary otherwise.
 * Options as collectDocs.
 */
export function checkDocs(options = {}) {
  const { summary, problems } = collectDocs(options);
  if (problems.length > 0) throw new DocsCheckError(problems);
  if (options.outDir) {
    rmSync(options.outDir, { recursive: true, force: true });
    mkdirSync(options.outDir, { recursive: true });
    for (const [name, text] of summary.modules) writeFileSync(path.join(options.outDir, name), text);
  }
  return summary;
}

/**
 * Checks every block of the docs: the summary (with the module texts in `modules`) and the
 * problems found, one line each, with file:line.
 *
 * @param {object} [options]
 * @param {string} [options.root] the repository (README.md, docs/, package.json, dist/cli)
 * @param {string[]} [options.files] markdown files relative to root (default README.md, docs/*.md)
 * @param {object} [options.consumerJson] the consumer's package.json (to list missing dependencies)
 * @param {(args: string[]) => string} [options.cliHelp] the CLI's --help text for `args`
 */
export function collectDocs(options = {}) {
  const root = options.root ?? repoRoot;
  const files = options.files ?? docFiles(root);
  const packageJson = readJson(path.join(root, 'package.json'), {});
  const lock = readJson(path.join(root, 'package-lock.json'), { packages: {} });
  const binDir = path.join(root, 'node_modules', '.bin');
  const env = {
    packageJson,
    lockPackages: new Set(
      Object.keys(lock.packages ?? {})
        .filter((key) => key.includes('node_modules/'))
        .map((key) => key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length)),
    ),
    bins: new Set(existsSync(binDir) ? readdirSync(binDir) : []),
    exists: (relative) => existsSync(path.join(root, relative)),
    cliHelp: options.cliHelp ?? defaultCliHelp(root),
  };

  const problems = [];
  const summary = {
    compiled: [],
    ran: [],
    parsed: [],
    checked: [],
    skipped: [],
    modules: new Map(),
    add: {},
  };
  const imports = new Map(); // package name → first block importing it
  const bases = new Map();
  for (const file of files) {
    const { blocks, problems: found } = extractBlocks(readFileSync(path.join(root, file), 'utf8'), file);
    problems.push(...found);
    for (const block of blocks) {
      const { kind, action, reason, problem } = classify(block);
      if (problem) {
        problems.push(problem);
        continue;
      }
      if (action === 'skip') {
        summary.skipped.push({ where: block.where, reason });
        continue;
      }
      if (action === 'check' || action === 'paths') {
        const found =
          action === 'check' ? guard(() => checkShell(block.code, env)) : checkPaths(block.code, env.exists);
        problems.push(...found.map((p) => `${block.where}: ${p}`));
        summary.checked.push(block.where);
        continue;
      }
      let parsed;
      if (kind === 'json' || kind === 'yaml') {
        try {
          if (kind === 'json') parsed = JSON.parse(block.code);
          else {
            const documents = parseYaml(block.code);
            parsed = documents.length === 1 ? documents[0] : documents;
          }
        } catch (error) {
          problems.push(`${block.where}: not valid ${kind}: ${error.message.split('\n')[0]}`);
          continue;
        }
        summary.parsed.push(block.where);
        if (action === 'parse') continue;
      }
      const base = moduleBase(block);
      if (bases.has(base)) {
        problems.push(`${block.where}: module name ${base} is taken by ${bases.get(base)}`);
        continue;
      }
      bases.set(base, block.where);
      if (block.directive?.prelude && (kind === 'ts' || kind === 'js')) {
        // Readers paste blocks as they are: what a block needs must be in it, not hidden.
        problems.push(
          `${block.where}: a code block must compile as copied: show what it needs in the block, not in a docs-check prelude`,
        );
        continue;
      }
      const extension = kind === 'js' ? '.js' : '.ts';
      const moduleFile = `${base}${action === 'test' ? `.test${extension}` : extension}`;
      const text = renderModule(block, parsed);
      summary.modules.set(moduleFile, text);
      for (const name of importedPackages(text)) if (!imports.has(name)) imports.set(name, block.where);
      if (kind === 'ts' || kind === 'js') summary.compiled.push(block.where);
      if (action === 'run') summary.modules.set(`${base}.run.test.ts`, renderRunner(block, moduleFile));
      const alias = block.directive?.name;
      if (alias !== undefined && action !== 'test' && (kind === 'ts' || kind === 'js')) {
        // A named block is also `./<name>.js`, the file a reader would save it as, so another
        // block imports it visibly, as the reader's own code would.
        if (bases.has(alias)) {
          problems.push(`${block.where}: module name ${alias} is taken by ${bases.get(alias)}`);
          continue;
        }
        bases.set(alias, block.where);
        summary.modules.set(`${alias}${extension}`, `export * from './${base}.js';\n`);
      }
      if (action === 'run' || action === 'test') summary.ran.push(block.where);
    }
  }
  if (options.consumerJson) {
    const { add, problems: missing } = docsDependencies(imports, packageJson, options.consumerJson);
    summary.add = add;
    problems.push(...missing);
  }
  return { summary, problems };

  function guard(check) {
    try {
      return check();
    } catch (error) {
      return [error.message];
    }
  }
}

/** The summary as printed: counts, then every skipped block with its reason. */
export function formatSummary(summary) {
  const lines = [
    `docs code blocks: compiled ${summary.compiled.length} (TypeScript, against the packed package), ` +
      `ran ${summary.ran.length}, parsed ${summary.parsed.length} (json/yaml), ` +
      `checked ${summary.checked.length} (sh commands, paths), skipped ${summary.skipped.length}`,
    ...summary.skipped.map(({ where, reason }) => `  skipped ${where}: ${reason}`),
  ];
  return lines.join('\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = process.argv.indexOf('--out');
  try {
    const summary = checkDocs({ outDir: out > 0 ? path.resolve(process.argv[out + 1]) : undefined });
    process.stdout.write(`${formatSummary(summary)}\n`);
    if (out < 0)
      process.stdout.write('(TypeScript blocks are compiled and run by node scripts/consumer-test.js)\n');
  } catch (error) {
    process.stderr.write(`${error.message}\n`);
    process.exitCode = 1;
  }
}
