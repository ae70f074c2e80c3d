// A signed statement as a PDF (docs/decisions.md, "Signed statements"): the same statement as the
// JSON, printed with its signature's kid and the SHA-256 digest of the canonical JSON it signs, so a
// reader checks the paper against the JSON. Deterministic: the document's dates are the statement's
// `at` (pdfkit derives the file id from them), and everything drawn comes from the statement.
import PDFDocument from 'pdfkit';
import type { SignedStatement } from './build.ts';
import type { Statement } from './schemas.ts';

type Doc = PDFKit.PDFDocument;
type PoolPart = Statement['pools'][number];

const MARGIN = 48;
const CHART = { width: 500, height: 150 };
/** the equity line's colour (the tests look for it on the rendered page) */
export const EQUITY_COLOUR = '#1f5fd6';

const usd = (n: number): string => `${n} USD`;

function heading(doc: Doc, text: string, size = 13): void {
  doc.moveDown(0.6).font('Helvetica-Bold').fontSize(size).fillColor('black').text(text, MARGIN).font('Helvetica').fontSize(9);
}

function rows(doc: Doc, pairs: Array<[string, string]>): void {
  for (const [name, value] of pairs) doc.text(`${name}: ${value}`, MARGIN);
}

/** The equity line over the period, on axes scaled to its range (a flat line sits mid-height). */
function equityChart(doc: Doc, points: PoolPart['equity']): void {
  if (doc.y + CHART.height + 30 > doc.page.height - MARGIN) doc.addPage();
  const x0 = MARGIN;
  const y0 = doc.y + 14;
  doc.fontSize(8).fillColor('black').text('Equity over the period (USD)', x0, doc.y);
  doc.lineWidth(0.5).strokeColor('#888888').rect(x0, y0, CHART.width, CHART.height).stroke();
  const times = points.map((p) => Date.parse(p.time));
  const values = points.map((p) => p.equityUsd);
  if (points.length > 0) {
    // a loop, not Math.min(...times): a long period's series would overflow the call's arguments
    let [tMin, tMax, vMin, vMax] = [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY];
    for (let i = 0; i < points.length; i++) {
      [tMin, tMax] = [Math.min(tMin, times[i]!), Math.max(tMax, times[i]!)];
      [vMin, vMax] = [Math.min(vMin, values[i]!), Math.max(vMax, values[i]!)];
    }
    const xOf = (t: number) => x0 + 6 + (tMax === tMin ? 0 : ((t - tMin) / (tMax - tMin)) * (CHART.width - 12));
    const yOf = (v: number) => y0 + CHART.height / 2 - (vMax === vMin ? 0 : ((v - (vMin + vMax) / 2) / (vMax - vMin)) * (CHART.height - 20));
    doc.lineWidth(2).strokeColor(EQUITY_COLOUR);
    points.forEach((p, i) => {
      // a step line: the equity holds until the next event changes it
      if (i === 0) doc.moveTo(xOf(times[0]!), yOf(p.equityUsd));
      else doc.lineTo(xOf(times[i]!), yOf(values[i - 1]!)).lineTo(xOf(times[i]!), yOf(p.equityUsd));
    });
    if (points.length === 1) doc.lineTo(x0 + CHART.width - 6, yOf(values[0]!));
    doc.stroke();
    doc.fillColor('black').fontSize(7);
    doc.text(usd(vMax), x0 + CHART.width + 4, y0, { lineBreak: false });
    doc.text(usd(vMin), x0 + CHART.width + 4, y0 + CHART.height - 8, { lineBreak: false });
  }
  doc.x = MARGIN;
  doc.y = y0 + CHART.height + 8;
  doc.fontSize(9);
}

function poolSection(doc: Doc, pool: PoolPart): void {
  heading(doc, `Pool: agent ${pool.agentId} (${pool.walletContext})`);
  const r = pool.subscription;
  rows(doc, [
    [
      'events replayed',
      `${pool.eventsReplayed}, last at global position ${pool.globalPosition ? `${pool.globalPosition.commit}/${pool.globalPosition.prepare}` : '-'}`,
    ],
    ['followed at this time', r ? `yes (${r.agentName})` : 'no (stopped)'],
  ]);
  if (r) {
    rows(doc, [
      ['allocatedUsd', usd(r.allocatedUsd)],
      ['currentBalanceUsd', usd(r.currentBalanceUsd)],
      ['availableUsd', usd(r.availableUsd)],
      ['withdrawableUsd', usd(r.withdrawableUsd)],
      ['inUseUsd', usd(r.inUseUsd)],
      ['pendingDeltaUsd', usd(r.pendingDeltaUsd)],
      ['realizedPnlUsd', usd(r.allocationBalanceAudit.realizedPnlUsd)],
      ['unrealizedPnlUsd', usd(r.allocationBalanceAudit.unrealizedPnlUsd)],
      ['netUserPayoutUsd', usd(r.allocationBalanceAudit.netUserPayoutUsd)],
    ]);
  }
  rows(doc, [
    ['fees charged in the period', usd(pool.fees.chargedUsd)],
    ['fees pending', usd(pool.fees.pendingUsd)],
  ]);
  doc.moveDown(0.4);
  equityChart(doc, pool.equity);
  heading(doc, `Ledger lines (${pool.ledger.length})`, 10);
  doc.font('Courier').fontSize(7);
  for (const line of pool.ledger) {
    const amounts = Object.entries(line.amounts)
      .map(([name, value]) => `${name}=${value}`)
      .join(' ');
    const after = line.balances ? ` -> allocatedUsd=${line.balances.allocatedUsd} currentBalanceUsd=${line.balances.currentBalanceUsd}` : '';
    doc.text(`#${line.sequence} ${line.time} ${line.type} ${amounts}${after}`, MARGIN, undefined, { width: doc.page.width - 2 * MARGIN });
  }
  for (const receipt of pool.feeReceipts) {
    doc.text(`fee ${receipt.settledAt}: feeUsd=${receipt.feeUsd} creatorFeeUsd=${receipt.creatorFeeUsd} platformFeeUsd=${receipt.platformFeeUsd}`, MARGIN);
  }
  doc.font('Helvetica').fontSize(9);
}

/** The statement as PDF bytes. */
export function statementPdf({ statement, signature }: SignedStatement): Promise<Buffer> {
  const at = new Date(statement.at);
  const doc = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    info: { Title: `Statement of ${statement.userId} at ${statement.at}`, Producer: 'agent-trading statements', CreationDate: at, ModDate: at },
  });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  doc.font('Helvetica-Bold').fontSize(16).text('Statement', MARGIN);
  doc.font('Helvetica').fontSize(9);
  const position = statement.globalPosition;
  rows(doc, [
    ['user', statement.userId],
    ['at', statement.at],
    ['from', statement.from ?? 'the first event'],
    ['computed at global position', position ? `${position.commit}/${position.prepare}` : '-'],
    ['signature key (kid)', `${signature.kid} (${signature.alg})`],
  ]);
  doc.text('SHA-256 of the signed canonical JSON (RFC 8785):', MARGIN);
  doc.font('Courier').fontSize(8).text(signature.digest, MARGIN).font('Helvetica').fontSize(9);
  heading(doc, 'Wallet');
  rows(doc, [
    ...statement.wallet.wallets.map((w): [string, string] => [`${w.walletContext} balanceUsd`, usd(w.balanceUsd)]),
    ['frozen', statement.wallet.frozen ? 'yes' : 'no'],
  ]);
  for (const pool of statement.pools) poolSection(doc, pool);
  if (statement.pools.length === 0) heading(doc, 'No pool followed by this time', 10);
  doc.end();
  return done;
}
