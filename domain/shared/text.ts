// Text one user shows to others (an agent's name, its tags, its channels' names) must read as what
// it is. NFKC folds compatibility look-alikes (fullwidth letters, ligatures, ideographic spaces)
// into their plain forms; what is left is refused when it could lie to a reader: direction
// overrides that reorder what is shown ("\u202Eevil" reads "live"), invisible characters, controls,
// or no visible character at all. One rule for the input schemas and the deciders.
import { z } from 'zod';

/** The form user-visible names are stored in. */
export const normalizeName = (text: string) => text.normalize('NFKC').trim();

// Marks that change the direction of the text around them: embeddings, overrides, isolates and the
// implicit marks (LRM, RLM, ALM).
const BIDI_CONTROL = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;

// Invisible characters that real names need: the joiners of emoji sequences and of Indic and
// Persian scripts (ZWJ, ZWNJ) and the variation selectors (emoji or text presentation).
// biome-ignore lint/suspicious/noMisleadingCharacterClass: each variation selector is listed on its own, as intended (the u flag reads code points)
const NEEDED_INVISIBLE = /[\u200C\u200D\u180B-\u180D\u180F\uFE00-\uFE0F\u{E0100}-\u{E01EF}]/gu;
// Tag characters are invisible too, but spell the subdivision flags (England, Scotland, Wales).
const EMOJI_TAG_SEQUENCE = /\u{1F3F4}[\u{E0020}-\u{E007E}]+\u{E007F}/gu;

// Controls, format characters (zero-width space, word joiner, BOM, soft hyphen…), lone surrogates,
// line and paragraph separators, and every default-ignorable code point (the Hangul fillers that
// render as nothing, for example).
const HIDDEN = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/u;

// Something a reader sees: not a space, not invisible, not a lone combining mark, not the blank
// braille pattern.
const VISIBLE = /[^\p{White_Space}\p{Default_Ignorable_Code_Point}\p{C}\p{M}\u2800]/u;

/**
 * Why a name (already normalised) would mislead its readers, as the end of a sentence
 * ("name must …"), or undefined when it reads as what it is. Empty text is left to length rules.
 */
export function nameProblem(text: string): string | undefined {
  if (text === '') return undefined;
  if (text !== normalizeName(text)) return 'must be NFKC-normalised without surrounding spaces';
  if (BIDI_CONTROL.test(text)) return 'must not contain characters that change the text direction (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C)';
  if (HIDDEN.test(text.replace(EMOJI_TAG_SEQUENCE, '').replace(NEEDED_INVISIBLE, ''))) {
    return 'must not contain invisible or control characters';
  }
  if (!VISIBLE.test(text)) return 'must contain a visible character';
  return undefined;
}

/**
 * A user-visible name in an input schema: NFKC-normalised and trimmed, `min`…`max` characters
 * (after normalising), refused (VALIDATION_FAILED) naming `field` when it could mislead.
 */
export function visibleName(field: string, { min, max }: { min: number; max: number }) {
  const length = `${field} must be ${min} to ${max} characters`;
  return z
    .string({ message: `${field} must be a string` })
    .overwrite(normalizeName)
    .min(min, length)
    .max(max, length)
    .superRefine((text, ctx) => {
      const problem = nameProblem(text);
      if (problem) ctx.addIssue({ code: 'custom', message: `${field} ${problem}` });
    });
}
