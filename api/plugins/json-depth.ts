/**
 * The deepest nesting of arrays and objects a JSON body may have. Our deepest schema nests four
 * levels (an agent's signalExecutionDefaults.takeProfitTiers[]); 32 leaves room for growth.
 */
export const MAX_JSON_DEPTH = 32;

export const JSON_DEPTH_MESSAGE = `JSON body nests arrays or objects deeper than ${MAX_JSON_DEPTH} levels`;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/**
 * Whether raw JSON text nests deeper than `max`, in one pass without parsing: brackets inside
 * strings do not count. It stops at the first level too deep, so a body built to make the parser
 * (and every recursive walk after it) work hard costs almost nothing to refuse. Malformed text is
 * left to the parser.
 */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--;
  }
  return false;
}
