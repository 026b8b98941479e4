import { readFileSync } from 'node:fs';

/**
 * docs/query.md's statements, as the page writes them: what the Athena DDL declares, the
 * de-duplicating view, the first queries by label and the DuckDB setup. The tests run or compare
 * these, so the page cannot drift from infra/query.yml or from what DuckDB answers.
 */
export interface QueryDocs {
  /** Every ```sql block of the page, in order. */
  blocks: string[];
  /** `CREATE EXTERNAL TABLE <name> (…) …;` by table name. */
  ddl: Map<string, string>;
  /** CREATE OR REPLACE VIEW ttl_archive_dedup … ; */
  view: string;
  /** `-- Q1: …` to `-- P4: …`, by label. */
  queries: Map<string, string>;
  /** The DuckDB section's statements, one per entry. */
  duckdb: string[];
}

const PAGE = new URL('../../docs/query.md', import.meta.url);

export function queryDocs(): QueryDocs {
  const page = readFileSync(PAGE, 'utf8');
  const blocks = [...page.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1] as string);
  const ddl = new Map<string, string>();
  for (const block of blocks) {
    const m = /^CREATE EXTERNAL TABLE (\w+) \(/.exec(block);
    if (m !== null) ddl.set(m[1] as string, block.trim());
  }
  const view = /CREATE OR REPLACE VIEW ttl_archive_dedup AS[\s\S]*?;/.exec(page)?.[0];
  const queries = new Map<string, string>();
  for (const m of page.matchAll(/^-- ([QP]\d): .*\n([\s\S]*?;)/gm))
    queries.set(m[1] as string, m[2] as string);
  const duckdbSection = page.slice(page.indexOf('\n## DuckDB\n'));
  const duckdbBlock = /```sql\n([\s\S]*?)```/.exec(duckdbSection)?.[1];
  if (view === undefined || queries.size !== 8 || duckdbBlock === undefined || ddl.size !== 2)
    throw new Error('docs/query.md: the DDL, the view, Q1–Q4 / P1–P4 or the DuckDB block not found');
  const duckdb = duckdbBlock
    .split(/;\s*\n/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
  return { blocks, ddl, view, queries, duckdb };
}
