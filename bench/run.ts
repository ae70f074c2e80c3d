// npm run bench [-- --seconds N --events N --audit-events N --bridges N --pools N --wallets N --export-events N
//   --only eventstore|http|floor|layout|audit|reconciliation|signals|wallet|access|stalls|mcp|statement|export|webhook-fanout]: every
// figure from one run on this machine, each compared with a baseline or target measured or stated in the same run.
import { accessBench } from './access.ts';
import { auditBench } from './audit.ts';
import { chatterBench } from './chatter.ts';
import { eventStoreBench } from './eventstore.ts';
import { exportBench } from './export.ts';
import { fanoutBench } from './fanout.ts';
import { floorBench } from './floor.ts';
import { httpBench } from './http.ts';
import { layoutBench } from './layout.ts';
import { mcpBench } from './mcp.ts';
import { reconciliationBench } from './reconciliation.ts';
import { signalParseBench } from './signals.ts';
import { stallsBench } from './stalls.ts';
import { statementBench } from './statement.ts';
import { walletBench, WALLETS } from './wallet.ts';
import { webhookFanoutBench } from './webhook-fanout.ts';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

const seconds = arg('seconds', 8);
const events = arg('events', 300_000);
const auditEvents = arg('audit-events', 1_000_000);
const onlyAt = process.argv.indexOf('--only');
const only = onlyAt > 0 ? process.argv[onlyAt + 1] : undefined;
console.log(`bench: ${seconds} s per measurement, exactly-once run at ${events} events, audit replay over ${auditEvents} events`);
if (!only || only === 'eventstore') await eventStoreBench(seconds, events);
if (!only || only === 'http') await httpBench(seconds);
if (!only || only === 'audit') await auditBench(auditEvents);
if (!only || only === 'reconciliation') await reconciliationBench(arg('bridges', 10_000));
if (!only || only === 'signals') {
  await signalParseBench(Math.min(seconds, 5));
  await fanoutBench(arg('pools', 1_000));
  await chatterBench(seconds);
}
if (!only || only === 'wallet') await walletBench(seconds, arg('wallets', WALLETS));
if (!only || only === 'access') await accessBench(seconds);
if (!only || only === 'stalls') await stallsBench(seconds);
if (!only || only === 'mcp') await mcpBench(seconds);
if (!only || only === 'statement') await statementBench();
if (!only || only === 'export') await exportBench(arg('export-events', 200_000));
if (!only || only === 'webhook-fanout') await webhookFanoutBench(arg('pools', 1_000));
if (!only || only === 'floor') await floorBench(seconds);
if (!only || only === 'layout') await layoutBench(seconds);
process.exit(0);
