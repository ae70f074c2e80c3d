// The streaming exports through real HTTP, on PostgreSQL and on the EventStoreDB peer: the caller's
// pool's ledger as CSV and JSONL (every line GET …/ledger gives, the trailer's count and digest, a
// cut-off body told apart, quotes round-tripped, the time range), the admin exports of every
// pool's ledger and of the transfer journal, and bad parameters answered 4xx in the envelope.
import { createHash } from 'node:crypto';
import t from 'tap';
import { poolId } from '../../domain/pool/state.ts';
import { LEDGER_COLUMNS } from '../../domain/pool/export-rows.ts';
import { TRANSFER_COLUMNS } from '../../domain/transfer/export-rows.ts';
import { api, dispatch, startTestApp, type TestApp } from '../support/app.ts';
import { followableAgent } from '../support/agents.ts';
import { oneTrade } from '../domain/pool/fixtures.ts';
import { signIn, type SignedIn } from '../support/auth.ts';

const SUBS = '/api/v1/users/me/subscriptions';

/** RFC 4180, strictly: quoted fields (doubled quotes inside), CRLF between records; every record ends with CRLF. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let fields: string[] = [];
  let i = 0;
  while (i < text.length) {
    let field = '';
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (i >= text.length) throw new Error('unterminated quoted field');
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        field += text[i++];
      }
    } else {
      while (i < text.length && text[i] !== ',' && text[i] !== '\r' && text[i] !== '\n') {
        if (text[i] === '"') throw new Error(`a quote inside an unquoted field at ${i}`);
        field += text[i++];
      }
    }
    fields.push(field);
    if (text[i] === ',') {
      i++;
      continue;
    }
    if (text.slice(i, i + 2) !== '\r\n') throw new Error(`a record not ended by CRLF at ${i}`);
    i += 2;
    records.push(fields);
    fields = [];
  }
  return records;
}

interface Checked {
  count: number;
  body: string;
}

/** The trailer line checked against the bytes before it; throws on a body cut short or changed. */
function checkTrailer(bytes: Buffer, format: 'csv' | 'jsonl'): Checked {
  const eol = format === 'csv' ? '\r\n' : '\n';
  const text = bytes.toString('utf8');
  if (!text.endsWith(eol)) throw new Error('the body does not end with a whole line');
  const start = text.lastIndexOf(eol, text.length - eol.length - 1) + eol.length;
  const body = text.slice(0, start);
  const last = text.slice(start, text.length - eol.length);
  let trailer: { count: number; sha256: string };
  if (format === 'csv') {
    const m = /^#trailer count=(\d+) sha256=([0-9a-f]{64})$/.exec(last);
    if (!m) throw new Error(`no trailer: ${JSON.stringify(last.slice(0, 80))}`);
    trailer = { count: Number(m[1]), sha256: m[2]! };
  } else {
    const parsed = JSON.parse(last) as { trailer?: { count: number; sha256: string } };
    if (!parsed.trailer) throw new Error('no trailer');
    trailer = parsed.trailer;
  }
  const digest = createHash('sha256').update(Buffer.from(body, 'utf8')).digest('hex');
  if (digest !== trailer.sha256) throw new Error('the digest does not match');
  const lines = body.split(eol).length - 1 - (format === 'csv' ? 1 : 0);
  if (format === 'jsonl' && lines !== trailer.count) throw new Error(`count ${trailer.count}, lines ${lines}`);
  return { count: trailer.count, body };
}

async function download(app: TestApp, path: string, token: string) {
  const res = await fetch(`${app.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

/** CSV records as objects keyed by the header. */
function csvRows(checked: Checked): Record<string, string>[] {
  const [header, ...records] = parseCsv(checked.body);
  return records.map((r) => Object.fromEntries(header!.map((h, i) => [h, r[i]!])));
}

const usdOf = (text: string | null | undefined) => (text === '' || text === null || text === undefined ? undefined : Number(text));

for (const eventStore of ['postgres', 'esdb'] as const) {
  t.test(`ledger exports (${eventStore})`, async (t) => {
    const app = await startTestApp({ eventStore, config: { ADMIN_EMAILS: 'admin@example.test' } });
    t.teardown(() => app.close());
    const [admin, dev, user, other] = (await Promise.all(
      ['admin', 'export-dev', 'export-user', 'export-other'].map((n) => signIn(app, `${n}@example.test`)),
    )) as [SignedIn, SignedIn, SignedIn, SignedIn];
    const agentId = await followableAgent(
      app,
      { developer: dev.accessToken, admin: admin.accessToken },
      { name: 'Exported', venue: 'SPOT_VENUE', successFeePercent: 10 },
      { live: true },
    );
    const id = poolId(user.userId, agentId, 'virtual');
    const ok = (res: { status: number; body: unknown }) => t.equal(res.status, 200, JSON.stringify(res.body));
    ok(await api(app, 'POST', SUBS, { token: user.accessToken, body: { agentId, allocationAmountUsd: 100 } }));
    ok(await api(app, 'POST', `${SUBS}/${agentId}/allocation/add`, { token: user.accessToken, body: { amountUsd: 50.5 } }));
    await dispatch(app, 'RecordPoolFact', { poolId: id, fact: { type: 'OpenTrade', data: oneTrade('tr-1', 40_000_000) } });
    await dispatch(app, 'RecordPoolFact', { poolId: id, fact: { type: 'CloseTrade', data: { tradeId: 'tr-1', realizedPnlMicro: 12_345_678 } } });
    // A refusal whose reason holds a comma, quotes, CR LF and a leading '#': CSV must quote it.
    const awkward = '#1, "quoted"\r\nand a second line';
    await app.deps.store.append(
      `pool-${id}`,
      [
        {
          type: 'TransferRejected',
          data: { transferId: 'xfer-awkward', reason: awkward },
          metadata: { correlationId: 'c', actor: 'test', occurredAt: new Date().toISOString() },
        },
      ],
      { expectedRevision: 'any' },
    );
    // a millisecond apart from the refusal's time on either side: `to` excludes its instant, `from` includes it
    await new Promise((r) => setTimeout(r, 5));
    const middle = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 5));
    ok(await api(app, 'POST', `${SUBS}/${agentId}/allocation/withdraw`, { token: user.accessToken, body: { amountUsd: 30 } }));
    ok(await api(app, 'POST', SUBS, { token: other.accessToken, body: { agentId, allocationAmountUsd: 20 } }));

    const ledger = (await api(app, 'GET', `${SUBS}/${agentId}/ledger?limit=100`, { token: user.accessToken })).body.data.items as Array<{
      sequence: number;
      eventId: string;
      type: string;
      time: string;
      amounts: Record<string, number>;
      reason?: string;
      followed: boolean;
      balances: { allocatedUsd: number; currentBalanceUsd: number; withdrawableUsd: number; pendingDeltaUsd: number } | null;
    }>;
    t.equal(ledger.length, 7);
    const exportPath = (query = '') => `${SUBS}/${agentId}/ledger/export${query}`;

    await t.test('CSV: every line of the ledger route, parsed back per RFC 4180, with its trailer', async (t) => {
      const res = await download(app, exportPath('?format=csv'), user.accessToken);
      t.equal(res.status, 200);
      t.match(res.headers.get('content-type'), /^text\/csv/);
      t.match(res.headers.get('content-disposition'), /attachment; filename=".+\.csv"/);
      const checked = checkTrailer(res.bytes, 'csv');
      t.equal(checked.count, ledger.length);
      const [header] = parseCsv(checked.body);
      t.same(header, [...LEDGER_COLUMNS]);
      const rows = csvRows(checked);
      t.equal(rows.length, ledger.length);
      for (const [i, item] of ledger.entries()) {
        const row = rows[i]!;
        t.equal(row.poolId, id);
        t.equal(Number(row.sequence), item.sequence);
        t.equal(row.eventId, item.eventId);
        t.equal(row.type, item.type);
        t.equal(row.time, item.time);
        t.match(row.globalCommit, /^\d+$/);
        t.match(row.globalPrepare, /^\d+$/);
        t.equal(row.reason, item.reason ?? '');
        t.equal(row.followed, String(item.followed));
        for (const [name, usd] of Object.entries(item.amounts)) t.equal(usdOf(row[name]), usd, `${item.type} ${name}`);
        for (const name of ['allocatedUsd', 'currentBalanceUsd', 'withdrawableUsd', 'pendingDeltaUsd'] as const) {
          t.equal(usdOf(row[name]), item.balances?.[name], `${item.type} ${name}`);
        }
      }
      t.equal(rows.find((r) => r.type === 'TransferRejected')?.reason, awkward, 'the awkward reason round-trips');
      t.equal(rows.find((r) => r.type === 'TradeClosed')?.realizedPnlUsd, '12.345678', 'amounts are exact decimal text');
      t.equal(rows[2]!.amountUsd, '50.500000');
      t.equal(rows.filter((r) => r.poolId !== id).length, 0, "only the caller's pool");
      t.ok(
        checked.body.split('\r\n').every((line) => !line.startsWith('#')),
        'no data line starts with the trailer mark',
      );
    });

    await t.test('JSONL: one object a line, the same values, and the trailer', async (t) => {
      const [csv, jsonl] = await Promise.all([download(app, exportPath(), user.accessToken), download(app, exportPath('?format=jsonl'), user.accessToken)]);
      t.match(jsonl.headers.get('content-type'), /^application\/x-ndjson/);
      const checked = checkTrailer(jsonl.bytes, 'jsonl');
      t.equal(checked.count, ledger.length);
      const objects = checked.body
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      t.same(Object.keys(objects[0]!), [...LEDGER_COLUMNS]);
      const fromCsv = csvRows(checkTrailer(csv.bytes, 'csv'));
      for (const [i, o] of objects.entries()) {
        t.same(Object.fromEntries(Object.entries(o).map(([k, v]) => [k, v === null ? '' : String(v)])), fromCsv[i]);
      }
      const last = JSON.parse(jsonl.bytes.toString('utf8').trimEnd().split('\n').at(-1)!);
      t.same(Object.keys(last), ['trailer']);
    });

    await t.test('a body cut short, or changed, fails its trailer check', async (t) => {
      for (const format of ['csv', 'jsonl'] as const) {
        const { bytes } = await download(app, exportPath(`?format=${format}`), user.accessToken);
        t.doesNotThrow(() => checkTrailer(bytes, format));
        for (const cut of [1, 40, Math.floor(bytes.length / 2), bytes.length - 1]) {
          t.throws(() => checkTrailer(bytes.subarray(0, cut), format), `${format} cut at ${cut}`);
        }
        // Whole lines dropped from the end: the last line left is a data line, not a trailer.
        const text = bytes.toString('utf8');
        const eol = format === 'csv' ? '\r\n' : '\n';
        const lines = text.split(eol);
        t.throws(() => checkTrailer(Buffer.from(lines.slice(0, -3).join(eol) + eol), format), `${format} without its last lines`);
        const changed = Buffer.from(bytes);
        changed[Math.floor(changed.length / 3)] ^= 1;
        t.throws(() => checkTrailer(changed, format), `${format} with a changed byte`);
      }
    });

    await t.test('from and to: only the lines of events in [from, to)', async (t) => {
      const before = checkTrailer((await download(app, exportPath(`?to=${encodeURIComponent(middle)}`), user.accessToken)).bytes, 'csv');
      const after = checkTrailer((await download(app, exportPath(`?from=${encodeURIComponent(middle)}&format=csv`), user.accessToken)).bytes, 'csv');
      t.equal(before.count, 6);
      t.equal(after.count, 1);
      const [withdrawal] = csvRows(after);
      t.equal(withdrawal!.type, 'WithdrawalRequested');
      t.equal(withdrawal!.sequence, '7', 'the sequence and running figures are those of the whole pool');
      t.equal(usdOf(withdrawal!.allocatedUsd), ledger[6]!.balances!.allocatedUsd);
    });

    await t.test('bad parameters and unknown pools: 4xx in the envelope', async (t) => {
      const cases: Array<[string, number, string]> = [
        ['?format=xml', 400, 'VALIDATION_FAILED'],
        ['?from=yesterday', 400, 'VALIDATION_FAILED'],
        ['?to=2025-13-01T00:00:00Z', 400, 'VALIDATION_FAILED'],
        [`?from=${encodeURIComponent(middle)}&to=2000-01-01T00:00:00Z`, 400, 'VALIDATION_FAILED'],
        ['?walletContext=paper', 400, 'VALIDATION_FAILED'],
        ['?walletContext=real', 404, 'SUBSCRIPTION_NOT_FOUND'],
      ];
      for (const [query, status, reason] of cases) {
        const res = await api(app, 'GET', exportPath(query), { token: user.accessToken });
        t.equal(res.status, status, query);
        t.match(res.body, { success: false, error: { reason } }, query);
      }
      const never = await api(app, 'GET', `${SUBS}/no-such-agent/ledger/export`, { token: user.accessToken });
      t.match(never, { status: 404, body: { success: false, error: { reason: 'SUBSCRIPTION_NOT_FOUND' } } });
      t.equal((await api(app, 'GET', exportPath())).status, 401);
      const fromTo = await api(app, 'GET', `/api/admin/exports/ledger?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z`, { token: admin.accessToken });
      t.match(fromTo, { status: 400, body: { error: { reason: 'VALIDATION_FAILED' } } });
      for (const path of ['/api/admin/exports/ledger', '/api/admin/exports/transfers']) {
        t.match(await api(app, 'GET', path, { token: user.accessToken }), { status: 403, body: { success: false, error: { reason: 'ADMIN_REQUIRED' } } });
        t.match(await api(app, 'GET', `${path}?format=pdf`, { token: admin.accessToken }), { status: 400, body: { error: { reason: 'VALIDATION_FAILED' } } });
      }
    });

    await t.test("admin: every pool's ledger lines", async (t) => {
      const [all, mine] = await Promise.all([
        download(app, '/api/admin/exports/ledger?format=csv', admin.accessToken),
        download(app, exportPath('?format=csv'), user.accessToken),
      ]);
      t.equal(all.status, 200);
      const rows = csvRows(checkTrailer(all.bytes, 'csv'));
      t.same(
        rows.filter((r) => r.poolId === id),
        csvRows(checkTrailer(mine.bytes, 'csv')),
        "the user's pool's lines, as the user's export has them",
      );
      const otherPool = rows.filter((r) => r.poolId === poolId(other.userId, agentId, 'virtual'));
      t.same(
        otherPool.map((r) => r.type),
        ['AgentFollowed', 'AllocationAdded'],
      );
      t.equal(new Set(rows.map((r) => `${r.globalCommit}/${r.globalPrepare}`)).size, rows.length, 'one line per event');
      const jsonl = checkTrailer((await download(app, '/api/admin/exports/ledger?format=jsonl', admin.accessToken)).bytes, 'jsonl');
      t.equal(jsonl.count, rows.length);
    });

    await t.test('admin: the transfer journal', async (t) => {
      const res = await download(app, '/api/admin/exports/transfers?format=csv', admin.accessToken);
      t.equal(res.status, 200);
      const checked = checkTrailer(res.bytes, 'csv');
      const [header] = parseCsv(checked.body);
      t.same(header, [...TRANSFER_COLUMNS]);
      const rows = csvRows(checked);
      t.equal(rows.length, checked.count);
      const adds = ledger.filter((i) => i.type === 'AllocationAdded');
      t.equal(adds.length, 2);
      // The follow's and the add's transfers: the wallet's debit (with the plan) and the pool's credit.
      const debits = rows.filter((r) => r.status === 'debited' && r.type === 'WalletDebited' && r.to === `pool:${id}`);
      t.same(debits.map((r) => r.amountUsd).sort(), ['100.000000', '50.500000']);
      for (const debit of debits) {
        t.equal(debit.from, `wallet:${user.userId}.virtual`);
        t.match(debit.eventId, /^[0-9a-f-]{36}$/);
        const credit = rows.find((r) => r.transferId === debit.transferId && r.type === 'AllocationAdded');
        t.equal(credit?.status, 'completed', `the credit of ${debit.transferId}`);
        t.equal(credit?.streamName, `pool-${id}`);
      }
      const withdrawal = rows.find((r) => r.type === 'WithdrawalRequested' && r.from === `pool:${id}`);
      t.match(withdrawal, { amountUsd: '30.000000', to: `wallet:${user.userId}.virtual` });
      t.ok(
        rows.some((r) => r.transferId === withdrawal?.transferId && r.type === 'WalletCredited' && r.status === 'completed'),
        'the withdrawal completed',
      );
      t.ok(
        rows.some((r) => r.transferId === 'xfer-awkward' && r.status === 'rejected'),
        'a rejection',
      );
      const later = checkTrailer((await download(app, `/api/admin/exports/transfers?from=${encodeURIComponent(middle)}`, admin.accessToken)).bytes, 'csv');
      t.ok(later.count > 0 && later.count < rows.length, 'from keeps the later facts only');
      const jsonl = checkTrailer((await download(app, '/api/admin/exports/transfers?format=jsonl', admin.accessToken)).bytes, 'jsonl');
      t.equal(jsonl.count, rows.length);
    });
  });
}
