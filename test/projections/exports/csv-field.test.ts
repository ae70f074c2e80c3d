// One CSV field (projections/exports/encode.ts): RFC 4180 quoting, and no cell a spreadsheet would run as a formula.
import t from 'tap';
import { csvField } from '../../../projections/exports/encode.ts';

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
