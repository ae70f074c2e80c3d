// A PDF as a reader sees it, through poppler-utils (installed by .ci/run when missing): its text
// (pdftotext) and its first page as pixels (pdftoppm -png), decoded here: an 8-bit RGB or grey PNG,
// not interlaced, as pdftoppm writes it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';

function inTempDir<T>(pdf: Buffer, run: (dir: string, file: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'statement-pdf-'));
  try {
    const file = join(dir, 'statement.pdf');
    writeFileSync(file, pdf);
    return run(dir, file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The PDF's text, in reading order (`pdftotext -layout` keeps a line's words on one line). */
export const pdfText = (pdf: Buffer): string => inTempDir(pdf, (_dir, file) => execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' }));

export interface Image {
  width: number;
  height: number;
  /** RGB of the pixel at (x, y), 0 to 255 each */
  rgb(x: number, y: number): [number, number, number];
}

const paeth = (a: number, b: number, c: number): number => {
  const p = a + b - c;
  const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)];
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
};

export function decodePng(png: Buffer): Image {
  let offset = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const data: Buffer[] = [];
  while (offset < png.length) {
    const length = png.readUInt32BE(offset);
    const type = png.toString('ascii', offset + 4, offset + 8);
    const body = png.subarray(offset + 8, offset + 8 + length);
    if (type === 'IHDR') {
      [width, height] = [body.readUInt32BE(0), body.readUInt32BE(4)];
      if (body[8] !== 8 || body[12] !== 0) throw new Error('only 8-bit, non-interlaced PNGs');
      channels = ({ 0: 1, 2: 3, 6: 4 } as Record<number, number>)[body[9]!]!;
    }
    if (type === 'IDAT') data.push(body);
    offset += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(data));
  const stride = width * channels;
  const pixels = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    for (let i = 0; i < stride; i++) {
      const x = raw[y * (stride + 1) + 1 + i]!;
      const a = i >= channels ? pixels[y * stride + i - channels]! : 0;
      const b = y > 0 ? pixels[(y - 1) * stride + i]! : 0;
      const c = i >= channels && y > 0 ? pixels[(y - 1) * stride + i - channels]! : 0;
      const predicted = [0, a, b, (a + b) >> 1, paeth(a, b, c)][filter]!;
      pixels[y * stride + i] = (x + predicted) & 0xff;
    }
  }
  return {
    width,
    height,
    rgb(x, y) {
      const at = y * stride + x * channels;
      return channels === 1 ? [pixels[at]!, pixels[at]!, pixels[at]!] : [pixels[at]!, pixels[at + 1]!, pixels[at + 2]!];
    },
  };
}

/** Page 1 rendered at `dpi` (pdftoppm -png -r). */
export const firstPage = (pdf: Buffer, dpi = 50): Image =>
  inTempDir(pdf, (dir, file) => {
    execFileSync('pdftoppm', ['-png', '-r', String(dpi), '-f', '1', '-l', '1', '-singlefile', file, join(dir, 'page')]);
    return decodePng(readFileSync(join(dir, 'page.png')));
  });
