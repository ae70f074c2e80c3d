// One CSV field (projections/exports/encode.ts): RFC 4180 quoting, and no cell a spreadsheet would run as a formula.
import t from 'tap';
import type { ExportCell } from '../../../domain/pool/export-rows.ts';
import { microToDecimal } from '../../../domain/shared/money.ts';
import { csvField, csvLine, exportChunks, type ExportFormat } from '../../../projections/exports/encode.ts';

t.test('quoting per RFC 4180', async (t) => {
  t.equal(csvField(null), '');
  t.equal(csvField(12), '12');
  t.equal(csvField('plain'), 'plain');
  t.equal(csvField('a,b'), '"a,b"');
  t.equal(csvField('say "hi"'), '"say ""hi"""');
  t.equal(csvField('two\r\nlines'), '"two\r\nlines"');
  t.equal(csvField('#not a comment'), '"#not a comment"');
});

t.test('a text a spreadsheet would run is written as text; amounts stay numbers', async (t) => {
  for (const formula of ['=HYPERLINK("http://x")', '+1+1', '-1+cmd', '@SUM(A1)', '\tpad', '\rx']) {
    const field = csvField(formula);
    t.ok(field.startsWith(`"'`), `${JSON.stringify(formula)} → ${JSON.stringify(field)}`);
  }
  t.equal(csvField('-12.345678'), '-12.345678', 'a negative amount is a number');
  t.equal(csvField('0.000001'), '0.000001');
});

t.test("a page's bytes are those of csvField and JSON.stringify, the micro columns as microToDecimal's text", async (t) => {
  const texts = [
    'plain',
    '',
    'a,b',
    'say "hi"',
    'two\r\nlines',
    'cr\r',
    'lf\n',
    '#hash',
    '=1+1',
    '+1',
    '-12.345678',
    '-1+cmd',
    '@x',
    '\tpad',
    'é',
    'naïve,',
    '日本',
    '🙂',
    '\ud800',
    'x#',
    'back\\slash',
    'tab\tinside',
    '\u0001',
    '\u007f',
    'ü"',
  ];
  const numbers = [0, -0, 7, 12345678901, -3, 1.5, Number.MAX_SAFE_INTEGER, 2 ** 60, Number.NaN];
  const amounts = [0, -0, 1, -1, 999_999, 1_000_000, -1_234_567, 100_000, 99_999, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 2 ** 60, null];
  type Row = Record<'text' | 'number' | 'flag' | 'amount' | 'none', ExportCell>;
  const rows: Row[] = [];
  for (let i = 0; i < 200; i++) {
    rows.push({
      text: texts[i % texts.length]!,
      number: numbers[i % numbers.length]!,
      flag: i % 3 === 0,
      amount: amounts[i % amounts.length]!,
      none: i % 4 === 0 ? (undefined as unknown as null) : null,
    });
  }
  const columns = ['text', 'number', 'flag', 'amount', 'none'] as const;
  const micro: ReadonlySet<keyof Row> = new Set(['amount'] as const);
  const decimalRow = (row: Row) => ({ ...row, amount: row.amount === null ? null : microToDecimal(row.amount as number) });
  async function* pages(): AsyncGenerator<Row[]> {
    yield rows.slice(0, 7);
    yield [];
    yield rows.slice(7);
  }
  const bytes = async (format: ExportFormat) => {
    const chunks: Buffer[] = [];
    for await (const chunk of exportChunks({ columns, micro, pages: pages() }, format)) chunks.push(chunk);
    return Buffer.concat(chunks.slice(0, -1)).toString('utf8');
  };
  const csv = csvLine(columns) + rows.map((row) => csvLine(columns.map((c) => decimalRow(row)[c] ?? null))).join('');
  // compared as the text of the bytes: a lone surrogate is written as U+FFFD by both
  const utf8 = (text: string) => Buffer.from(text, 'utf8').toString('utf8');
  t.equal(await bytes('csv'), utf8(csv));
  t.equal(await bytes('jsonl'), utf8(rows.map((row) => `${JSON.stringify(decimalRow(row))}\n`).join('')));
});
