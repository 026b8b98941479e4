// Types of scripts/docs-snippets.js (plain JavaScript, run by node) for the tests that import it.

export class DocsCheckError extends Error {
  override name: 'DocsCheckError';
  /** One line per failure, each starting with file:line. */
  readonly problems: string[];
  constructor(problems: string[]);
}

export interface Directive {
  run: boolean;
  test: boolean;
  paths: boolean;
  skip: string | undefined;
  name: string | undefined;
  /** TypeScript put before the block (the comment's lines after the first). */
  prelude: string;
}

export interface Block {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** `file:line`. */
  where: string;
  lang: string;
  code: string;
  lineCount: number;
  directive: Directive | undefined;
  /** TypeScript put after the block (a docs-check-after comment). */
  epilogue: string;
}

export type Action = 'compile' | 'run' | 'test' | 'parse' | 'check' | 'paths' | 'skip' | 'invalid';

export interface Classification {
  kind: 'ts' | 'js' | 'json' | 'yaml' | 'sh' | 'other';
  action: Action;
  reason?: string;
  problem?: string;
}

export interface ShellEnv {
  packageJson: {
    name?: string;
    scripts?: Record<string, string>;
    peerDependencies?: Record<string, string>;
  };
  lockPackages: Set<string>;
  bins: Set<string>;
  exists(relativePath: string): boolean;
  cliHelp(args: string[]): string;
}

export interface PackageJson {
  name?: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

export interface DocsSummary {
  compiled: string[];
  ran: string[];
  parsed: string[];
  checked: string[];
  skipped: { where: string; reason: string }[];
  /** Module file name → text, as written to docs-check/. */
  modules: Map<string, string>;
  /** devDependencies the consumer copy needs for the docs' imports. */
  add: Record<string, string>;
}

export interface DocsOptions {
  /** The repository: README.md, docs/, package.json, package-lock.json, dist/cli. */
  root?: string;
  /** Markdown files relative to root; default README.md and docs/*.md. */
  files?: string[];
  /** The consumer's package.json, to list the dependencies the docs' imports need. */
  consumerJson?: PackageJson;
  /** The CLI's --help text for `args` (default: node dist/cli/bin.js <args> --help). */
  cliHelp?: (args: string[]) => string;
}

export function docFiles(root?: string): string[];
export function parseDirective(text: string, where: string, problems: string[]): Directive;
export function extractBlocks(markdown: string, file: string): { blocks: Block[]; problems: string[] };
export function classify(block: Block): Classification;
export function parseYaml(code: string): unknown[];
export function shellCommands(line: string): string[][];
export function helpEntries(help: string, section: 'Commands' | 'Options'): Set<string>;
export function checkShell(code: string, env: ShellEnv): string[];
export function checkPaths(code: string, exists: (relativePath: string) => boolean): string[];
export function moduleBase(block: Block): string;
export function renderModule(block: Block, parsedValue?: unknown): string;
export function renderRunner(block: Block, moduleFile: string): string;
export function importedPackages(text: string): Set<string>;
export function docsDependencies(
  imports: Map<string, string>,
  packageJson: PackageJson,
  consumerJson: PackageJson,
): { add: Record<string, string>; problems: string[] };
export function collectDocs(options?: DocsOptions): { summary: DocsSummary; problems: string[] };
export function checkDocs(options?: DocsOptions & { outDir?: string }): DocsSummary;
export function formatSummary(summary: DocsSummary): string;
