// An export's bytes (docs/decisions.md, "Streaming exports"): CSV per RFC 4180 (a header row,
// fields quoted when they hold a comma, a quote, CR or LF, or start with '#', CRLF line ends) or
// JSONL (one object a line), then one trailer line with the count of rows and the SHA-256 of every
// byte before it, so a cut-off file is told from a whole one. Written as the rows come, a page at a
// time: nothing here holds more than one page.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { ExportCell } from '../../domain/pool/export-rows.ts';
import { microToDecimal } from '../../domain/shared/money.ts';

export const EXPORT_FORMATS = ['csv', 'jsonl'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8; header=present',
  jsonl: 'application/x-ndjson; charset=utf-8',
};

/**
 * What an export writes: its columns, in order, and its rows as pages (one row an object with those
 * keys, in that order). A page may make its rows as they are taken, even into one object: the
 * encoder writes each row before it takes the next, and takes every row of a page before the next page.
 */
export interface ExportSource<Row extends Record<string, ExportCell> = Record<string, ExportCell>> {
  columns: readonly (keyof Row & string)[];
  /**
   * The columns whose cells are integer micro-USD (or null), written as exact decimal text with six
   * places (microToDecimal, the same text in CSV and JSONL): the row carries the number, not the text.
   */
  micro?: ReadonlySet<keyof Row & string>;
  pages: AsyncIterable<Iterable<Row>>;
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

const COMMA = 44;
const CR = 13;
const LF = 10;
const DOT = 46;
const MINUS = 45;
const QUOTE = 34;
const BACKSLASH = 92;
const LBRACE = 123;
const RBRACE = 125;
const MICRO = 1_000_000;

/**
 * A page's bytes, written into one buffer kept for the whole export: a CSV cell goes in as bytes
 * (ASCII text copied a character at a time, integers and micro-USD amounts as digits), so a row
 * leaves no strings behind, only the cells it was made of. What the page wrote is copied out as the
 * chunk (the buffer is written again for the next page while the reader may still hold the chunk).
 * A text that needs quoting, or is not ASCII, is written as csvField writes it: the same bytes.
 */
class PageWriter {
  private buf = Buffer.allocUnsafeSlow(64 * 1024);
  private at = 0;

  private room(bytes: number): void {
    if (this.at + bytes <= this.buf.length) return;
    const bigger = Buffer.allocUnsafeSlow(Math.max(this.buf.length * 2, this.at + bytes));
    this.buf.copy(bigger, 0, 0, this.at);
    this.buf = bigger;
  }

  byte(b: number): void {
    this.room(1);
    this.buf[this.at++] = b;
  }

  /** Any text, UTF-8. */
  text(text: string): void {
    this.room(text.length * 3);
    this.at += this.buf.write(text, this.at, 'utf8');
  }

  /** A non-negative integer below 2^53, in decimal; `width` pads it with leading zeros. */
  digits(n: number, width = 1): void {
    let count = 1;
    for (let m = n; m >= 10; m = Math.floor(m / 10)) count++;
    if (count < width) count = width;
    this.room(count);
    const { buf } = this;
    let i = this.at + count;
    this.at = i;
    for (let m = n; i > this.at - count; m = Math.floor(m / 10)) buf[--i] = 48 + (m % 10);
  }

  /** A micro-USD amount as microToDecimal writes it. */
  micro(cell: number): void {
    if (!Number.isSafeInteger(cell)) return this.text(microToDecimal(cell));
    if (cell < 0) this.byte(MINUS);
    const abs = Math.abs(cell);
    const fraction = abs % MICRO;
    this.digits((abs - fraction) / MICRO);
    this.byte(DOT);
    this.digits(fraction, 6);
  }

  /** One CSV field, the bytes of csvField(cell). */
  field(cell: ExportCell): void {
    if (cell === null) return;
    if (typeof cell === 'number' && Number.isSafeInteger(cell) && cell >= 0) return this.digits(cell);
    if (typeof cell !== 'string') return this.text(String(cell));
    const n = cell.length;
    if (n === 0) return;
    const first = cell.charCodeAt(0);
    if (first === HASH || FORMULA_START.has(first)) return this.text(csvField(cell));
    this.room(n);
    const { buf } = this;
    const start = this.at;
    for (let i = 0; i < n; i++) {
      const c = cell.charCodeAt(i);
      if (c >= 0x80 || c === QUOTE || c === COMMA || c === CR || c === LF) {
        this.at = start;
        return this.text(csvField(cell));
      }
      buf[start + i] = c;
    }
    this.at = start + n;
  }

  /** One row's CSV line, its cells in the order of the columns (a cell it lacks is empty). */
  csvRow<Row extends Record<string, ExportCell>>(layout: Layout, row: Row): void {
    const { columns, micro } = layout;
    for (let i = 0; i < columns.length; i++) {
      if (i > 0) this.byte(COMMA);
      const cell = row[columns[i]!] ?? null;
      if (micro[i] && typeof cell === 'number') this.micro(cell);
      else this.field(cell);
    }
    this.byte(CR);
    this.byte(LF);
  }

  /** A JSON string of ASCII text with nothing to escape as it is, any other as JSON.stringify writes it. */
  private jsonString(text: string): void {
    const n = text.length;
    this.room(n + 2);
    const { buf } = this;
    const start = this.at;
    buf[start] = QUOTE;
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c < 0x20 || c >= 0x7f || c === QUOTE || c === BACKSLASH) {
        this.at = start;
        return this.text(JSON.stringify(text));
      }
      buf[start + 1 + i] = c;
    }
    buf[start + 1 + n] = QUOTE;
    this.at = start + n + 2;
  }

  /** Text known to be ASCII (a layout's keys). */
  private ascii(text: string): void {
    const n = text.length;
    this.room(n);
    const { buf } = this;
    for (let i = 0; i < n; i++) buf[this.at + i] = text.charCodeAt(i);
    this.at += n;
  }

  /**
   * One row's JSONL line, the bytes of JSON.stringify(row) with the `micro` cells (numbers) as their
   * decimal text: the row's keys are the columns, in their order (ExportSource); a cell that is
   * undefined is left out, as JSON.stringify leaves it.
   */
  jsonRow<Row extends Record<string, ExportCell>>(layout: Layout, row: Row): void {
    const { columns, keys, micro } = layout;
    this.byte(LBRACE);
    let first = true;
    for (let i = 0; i < columns.length; i++) {
      const cell = row[columns[i]!] as ExportCell | undefined;
      if (cell === undefined) continue;
      if (!first) this.byte(COMMA);
      first = false;
      this.ascii(keys[i]!);
      if (cell === null) this.ascii('null');
      else if (typeof cell === 'string') this.jsonString(cell);
      else if (typeof cell !== 'number') this.ascii(cell ? 'true' : 'false');
      else if (micro[i]) {
        this.byte(QUOTE);
        this.micro(cell);
        this.byte(QUOTE);
      } else if (Number.isSafeInteger(cell) && cell >= 0) this.digits(cell);
      else this.ascii(JSON.stringify(cell));
    }
    this.byte(RBRACE);
    this.byte(LF);
  }

  /** What was written since the last take, as a buffer of its own. */
  take(): Buffer {
    const chunk = Buffer.allocUnsafeSlow(this.at);
    this.buf.copy(chunk, 0, 0, this.at);
    this.at = 0;
    return chunk;
  }
}

/** An export's columns as the page writer reads them: names, JSON keys (`"name":`) and which hold micro-USD. */
interface Layout {
  columns: readonly string[];
  keys: readonly string[];
  micro: readonly boolean[];
}

const layoutOf = (columns: readonly string[], micro: ReadonlySet<string> | undefined): Layout => ({
  columns,
  keys: columns.map((c) => `${JSON.stringify(c)}:`),
  micro: columns.map((c) => micro?.has(c) === true),
});

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
  const { columns, micro } = source;
  const layout = layoutOf(columns, micro);
  const writer = new PageWriter();
  let count = 0;
  if (format === 'csv') {
    const header = Buffer.from(csvLine(columns), 'utf8');
    hash.update(header);
    yield header;
  }
  for await (const page of source.pages) {
    const before = count;
    if (format === 'csv')
      for (const row of page) {
        writer.csvRow(layout, row);
        count++;
      }
    else
      for (const row of page) {
        writer.jsonRow(layout, row);
        count++;
      }
    if (count === before) continue;
    const chunk = writer.take();
    hash.update(chunk);
    yield chunk;
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
