// Channel text as the parser reads it. NFKC folds the "fonts" channels post in (mathematical bold
// 𝐋𝐎𝐍𝐆, full-width ＬＯＮＧ, circled ①) into plain letters and digits; a few emoji that carry a
// meaning become that word; every other emoji, markdown mark and decoration becomes a space.

/** Longer texts are not parsed (a Telegram message holds 4,096 characters); normalised, twice this. */
export const MAX_TEXT_LENGTH = 10_000;

/** Emoji channels use as words: a target, a stop, a reached level ("TP1 ✅"). */
const MEANINGFUL: ReadonlyArray<[RegExp, string]> = [
  [/\u{1F3AF}/gu, ' target '],
  [/[\u{1F6D1}\u26D4]/gu, ' stop '],
  [/[\u2705\u2611\u2713\u2714]/gu, ' hit '],
];

const DASHES = /[\u2010-\u2015\u2212\uFE58\uFE63]/g;
const APOSTROPHES = /[\u2018\u2019\u02BC]/g;
const LINE_BREAKS = /\r\n?|[\u2028\u2029\u0085]/g;
// Pictographs and other symbols, format and private-use characters, lone surrogates, variation
// selectors, arrows and bullets, markdown emphasis, and controls other than the line break.
const DECORATION =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the controls are what this removes
  // biome-ignore lint/suspicious/noMisleadingCharacterClass: the variation selectors are listed on their own, as intended
  /[\p{Extended_Pictographic}\p{So}\p{Sk}\p{Cf}\p{Me}\p{Co}\p{Cs}\uFE0E\uFE0F\u2190-\u21FF\u27F0-\u27FF\u2900-\u297F\u2022\u00B7*_~\u0000-\u0009\u000B-\u001F\u007F]/gu;

/** The text the parser reads: same words, same digits, plain characters, `\n` between lines. */
export function normaliseText(text: string): string {
  let out = text.normalize('NFKC').replace(LINE_BREAKS, '\n');
  for (const [emoji, word] of MEANINGFUL) out = out.replace(emoji, word);
  return out.replace(DASHES, '-').replace(APOSTROPHES, "'").replace(DECORATION, ' ');
}
