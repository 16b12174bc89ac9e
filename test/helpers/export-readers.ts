import { execFile } from 'node:child_process';
import { testPython } from './python';

/**
 * Runs `code` in the test venv's Python (DuckDB and pyarrow from PyPI: readers no one here wrote) with `args` as
 * sys.argv[1:], and parses what it prints as JSON. The code prints one JSON value.
 */
export function readWithPython<T>(code: string, ...args: string[]): Promise<T> {
  return new Promise((resolve, reject) => {
    execFile(testPython(), ['-c', code, ...args], { maxBuffer: 64 << 20 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${error.message}\n${stderr}`));
      else resolve(JSON.parse(stdout) as T);
    });
  });
}

/** DuckDB's answer to `sql` (one in-memory connection), rows as arrays, dates and decimals as strings. */
export function duckdbQuery<Row extends unknown[] = unknown[]>(sql: string): Promise<Row[]> {
  return readWithPython<Row[]>(
    'import duckdb, json, sys\nprint(json.dumps(duckdb.sql(sys.argv[1]).fetchall(), default=str))',
    sql,
  );
}

/** The one row DuckDB answers `sql` with. */
export async function duckdbRow<Row extends unknown[] = unknown[]>(sql: string): Promise<Row> {
  const [row, ...more] = await duckdbQuery<Row>(sql);
  if (row === undefined || more.length > 0) throw new Error(`expected one row from: ${sql}`);
  return row;
}
