// The recovery worker's command: finish (or compensate) a transfer that a crash interrupted after
// its debit. The plan comes from the debit event on the source stream, never from a read model.
import type { Command } from '../../domain/shared/decider.ts';
import { refuse } from '../../domain/shared/errors.ts';
import { resumed, type TransferStatus } from '../../domain/transfer/process.ts';
import { walletDecider } from '../../domain/wallet/decide.ts';
import { walletDebitedSchema } from '../../domain/wallet/events.ts';
import { walletStream } from '../../domain/wallet/state.ts';
import type { Tools } from '../dispatch.ts';
import { runTransfer } from './run.ts';

export interface ResumeTransferData {
  transferId: string;
  /** the source wallet's user */
  userId: string;
}

export async function resumeTransfer({ data }: Command<'ResumeTransfer', ResumeTransferData>, tools: Tools): Promise<{ status: TransferStatus }> {
  const paid = (await tools.load(walletDecider, data.userId)).state.transfers[data.transferId];
  if (!paid) throw refuse('TRANSFER_NOT_FOUND', `no transfer ${data.transferId} was debited`);
  if (paid.refunded) return { status: 'compensated' };
  const debit = (await tools.deps.store.readStream(walletStream(data.userId)))
    .filter((e) => e.type === 'WalletDebited')
    .map((e) => walletDebitedSchema.parse(e.data).transfer)
    .find((t) => t.transferId === data.transferId)!;
  return { status: (await runTransfer(tools, resumed(debit))).status };
}
