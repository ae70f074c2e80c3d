import t from 'tap';
import { nameProblem, normalizeName } from '../../../domain/shared/text.ts';

const check = (text: string) => nameProblem(normalizeName(text));

t.test('names that read as what they are pass', async (t) => {
  for (const name of ['Momentum', 'Café', 'Cafe\u0301', '🚀', '👩🏽‍💻 Dev', '❤️', '🏳️‍🌈', '🏴󠁧󠁢󠁥󠁮󠁧󠁿', 'می‌خواهم', 'עברית', 'x'])
    t.equal(check(name), undefined, JSON.stringify([...name].map((c) => c.codePointAt(0)!.toString(16))));
});

t.test('direction controls, invisible characters and blank names are refused', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['\u202eevil', /direction/],
    ['a\u202ab', /direction/],
    ['a\u2067b', /direction/],
    ['a\u200eb', /direction/],
    ['a\u061cb', /direction/],
    ['\u200b', /invisible/],
    ['a\u2060b', /invisible/],
    ['a\u00adb', /invisible/],
    ['a\u0000b', /invisible/],
    ['a\u001bb', /invisible/],
    ['a\ud800b', /invisible/],
    ['a\u{e0041}b', /invisible/],
    ['\u3164', /invisible/],
    ['\u2800', /visible character/],
    ['\u0301\u0302', /visible character/],
  ];
  for (const [text, problem] of cases) t.match(check(text), problem, JSON.stringify(text));
});

t.test('normalising folds compatibility forms and trims', async (t) => {
  t.equal(normalizeName(' \uff21\uff22\u3000\ufb01 '), 'AB fi');
  t.equal(normalizeName('Cafe\u0301'), 'Café');
  t.match(nameProblem('\uff21'), /NFKC/, 'the domain refuses text that was not normalised');
});
