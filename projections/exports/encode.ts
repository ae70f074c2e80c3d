// An export's bytes (docs/decisions.md, "Streaming exports"): CSV per RFC 4180 (a header row,
// fields quoted when they hold a comma, a quote, CR or LF, or start with '#', CRLF line ends) or
// JSONL (one object a line), then one trailer line with the count of rows and the SHA-256 of every
// byte before it, so a cut-off file is told from a whole one. Written as the rows come, a page at a
// time: nothing here holds more than one page.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { ExportCell } from '../../domain/pool/export-rows.ts';

export const EXPORT_FORMATS = ['csv', 'jsonl'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8; header=present',
  jsonl: 'application/x-ndjson; charset=utf-8',
};

/** What an export writes: its columns, in order, and its rows as pages (one row an object with those keys, in that order). */
export interface ExportSource<Row extends Record<string, ExportCell> = Record<string, ExportCell>> {
  columns: readonly (keyof Row & string)[];
  pages: AsyncIterable<Row[]>;
}

const NEEDS_QUOTES = /[",\r\n]/;

/** What a spreadsheet would run as a formula when the file is opened (a first character of `=+-@\t\r`); a plain (negative) number is not one. */
const FORMULA_START: ReadonlySet<number> = new Set([...'=+-@\t\r'].map((c) => c.charCodeAt(0)));
const PLAIN_NUMBER = /^-?\d+(\.\d+)?$/;
const HASH = 35;

/**
 * One CSV field: empty for nothing, quoted (inner quotes doubled) when it must be. A text that a
 * spreadsheet would take for a formula (a venue's reason starting with `=`, say) is written with a
 * leading `'` and quoted, so opening an export never runs it; amounts are plain numbers and stay as they are.
 * The first character is looked at once: most cells (ids, times, amounts) need neither.
 */
export function csvField(cell: ExportCell): string {
  if (cell === null) return '';
  if (typeof cell !== 'string') return String(cell);
  const first = cell.charCodeAt(0);
  if (FORMULA_START.has(first) && !PLAIN_NUMBER.test(cell)) return `"'${cell.replaceAll('"', '""')}"`;
  return first === HASH || NEEDS_QUOTES.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell;
}

/** One CSV line of `cells`, CRLF-ended. */
export function csvLine(cells: readonly ExportCell[]): string {
  let line = csvField(cells[0] ?? null);
  for (let i = 1; i < cells.length; i++) line += `,${csvField(cells[i]!)}`;
  return `${line}\r\n`;
}

/** One row's CSV line, its cells in the order of `columns` (a cell it lacks is empty). */
function csvRow<Row extends Record<string, ExportCell>>(columns: readonly (keyof Row & string)[], row: Row): string {
  let line = csvField(row[columns[0]!] ?? null);
  for (let i = 1; i < columns.length; i++) line += `,${csvField(row[columns[i]!] ?? null)}`;
  return `${line}\r\n`;
}

/** The last line: `#trailer count=N sha256=HEX` in CSV (a comment row), `{"trailer":{…}}` in JSONL. */
export function trailerLine(format: ExportFormat, count: number, sha256: string): string {
  return format === 'csv' ? `#trailer count=${count} sha256=${sha256}\r\n` : `${JSON.stringify({ trailer: { count, sha256 } })}\n`;
}

/**
 * The export's bytes, a page of rows per chunk, pulled as the reader asks (an async generator
 * reads its next page only when its consumer wants more): the reply's backpressure reaches the
 * store's reads. `onRows` hears the running count of rows written.
 */
export async function* exportChunks<Row extends Record<string, ExportCell>>(
  source: ExportSource<Row>,
  format: ExportFormat,
  onRows?: (rows: number) => void,
): AsyncGenerator<Buffer> {
  const hash = createHash('sha256');
  const emit = (text: string): Buffer => {
    const bytes = Buffer.from(text, 'utf8');
    hash.update(bytes);
    return bytes;
  };
  const { columns } = source;
  let count = 0;
  if (format === 'csv') yield emit(csvLine(columns));
  for await (const page of source.pages) {
    if (page.length === 0) continue;
    let text = '';
    if (format === 'csv') for (const row of page) text += csvRow(columns, row);
    else for (const row of page) text += `${JSON.stringify(row)}\n`;
    count += page.length;
    yield emit(text);
    onRows?.(count);
  }
  yield Buffer.from(trailerLine(format, count, hash.digest('hex')), 'utf8');
}

/** The export as a byte stream (for reply.send and for a file). */
export const exportStream = <Row extends Record<string, ExportCell>>(
  source: ExportSource<Row>,
  format: ExportFormat,
  onRows?: (rows: number) => void,
): Readable => Readable.from(exportChunks(source, format, onRows), { objectMode: false });
