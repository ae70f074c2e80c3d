// RFC 8785 canonical JSON: the number forms and key order of the RFC, so the webhook signature is
// the same text a client canonicalising with any RFC 8785 library signs.
import t from 'tap';
import { canonicalJson } from '../../../domain/shared/canonical-json.ts';

t.test('numbers are written in ECMAScript shortest form (RFC 8785 section 3.2.2.3)', async (t) => {
  const cases: Array<[number, string]> = [
    [0, '0'],
    [-0, '0'],
    [1e21, '1e+21'],
    [1e-7, '1e-7'],
    // biome-ignore lint/correctness/noPrecisionLoss: RFC 8785's own example of a double printed shortest
    [333333333.33333329, '333333333.3333333'],
    [1e30, '1e+30'],
    [4.5, '4.5'],
    [2e-3, '0.002'],
    [0.000000000000000000000000001, '1e-27'],
    [9007199254740992, '9007199254740992'],
    [295147905179352830000, '295147905179352830000'],
    [5e-324, '5e-324'],
    [1.7976931348623157e308, '1.7976931348623157e+308'],
    [-1.5, '-1.5'],
    [100, '100'],
  ];
  for (const [value, text] of cases) t.equal(canonicalJson(value), text, text);
  for (const value of [NaN, Infinity, -Infinity]) t.throws(() => canonicalJson(value), RangeError);
});

t.test('object keys are sorted by UTF-16 code units, recursively; arrays keep their order', async (t) => {
  const keys = {
    '\u20ac': 'Euro Sign',
    '\r': 'Carriage Return',
    '\ufb33': 'Hebrew Letter Dalet With Dagesh',
    '1': 'One',
    '\ud83d\ude00': 'Emoji: Grinning Face',
    '\u0080': 'Control',
    '\u00f6': 'Latin Small Letter O With Diaeresis',
  };
  const members = [
    '"\\r":"Carriage Return"',
    '"1":"One"',
    '"\u0080":"Control"',
    '"\u00f6":"Latin Small Letter O With Diaeresis"',
    '"\u20ac":"Euro Sign"',
    '"\ud83d\ude00":"Emoji: Grinning Face"',
    '"\ufb33":"Hebrew Letter Dalet With Dagesh"',
  ];
  t.equal(canonicalJson(keys), `{${members.join(',')}}`, 'the order of RFC 8785 section 3.2.3');
  t.equal(canonicalJson({ b: [3, { z: 1, a: null }], a: { d: true, c: 'x' } }), '{"a":{"c":"x","d":true},"b":[3,{"a":null,"z":1}]}');
  t.equal(canonicalJson({ B: 1, a: 2, _: 3 }), '{"B":1,"_":3,"a":2}', 'upper case before underscore before lower case');
});

t.test('strings are escaped as JSON.stringify escapes them, nothing else; no whitespace', async (t) => {
  t.equal(canonicalJson('€ "quoted" \\ \u001f \n é'), '"€ \\"quoted\\" \\\\ \\u001f \\n é"');
  t.equal(canonicalJson({ text: 'LONG  BTC', n: [1, 2.5, true, false, null] }), '{"n":[1,2.5,true,false,null],"text":"LONG  BTC"}');
  t.equal(canonicalJson({ a: undefined, b: 1 }), '{"b":1}', 'an undefined member is left out, as JSON.parse never gives one');
  t.equal(canonicalJson(JSON.parse('{"b" : 1.50 , "a":[ 1E2 ]}')), '{"a":[100],"b":1.5}');
});
