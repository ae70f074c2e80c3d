import { agentEventSchema, agentEventTypes, seatEventSchema, type AgentEvent } from '../../domain/agent/index.ts';
import { assertNever } from '../../domain/shared/decider.ts';
import type { PoolClient } from '../../infra/db.ts';
import type { Position } from '../../infra/eventstore/port.ts';
import type { Projector } from '../projector.ts';
import { agentsMigrations } from './schema.ts';

/** One row per agent: the developer agent record, its review state and its beta seat count. */
export const agentsProjector: Projector = {
  name: 'agents',
  migrations: agentsMigrations,
  tables: ['agent_records'],
  async apply(client, event) {
    if (event.streamName.startsWith('agent-') && agentEventTypes.has(event.type)) {
      const parsed = agentEventSchema.parse({ type: event.type, data: event.data });
      await applyAgentEvent(client, event.streamName.slice('agent-'.length), parsed, event.position);
    } else if (event.streamName.startsWith('betaseats-')) {
      // Seats count users: a further claim of a user holding a seat (or one given back) counts nothing.
      const seat = seatEventSchema.parse({ type: event.type, data: event.data });
      const delta = seat.type === 'BetaSeatTaken' ? 1 : seat.type === 'BetaSeatReleased' ? -1 : 0;
      if (delta !== 0) await client.query('UPDATE agent_records SET beta_seats_taken = beta_seats_taken + $2 WHERE id = $1', [seat.data.agentId, delta]);
    }
  },
};

async function applyAgentEvent(client: PoolClient, agentId: string, event: AgentEvent, position: Position): Promise<void> {
  switch (event.type) {
    case 'AgentListed': {
      const { signingSecretCiphertext: _secret, agentId: _id, listedAt, ...record } = event.data;
      await client.query(
        `INSERT INTO agent_records (id, developer_id, record, beta_status, created_at, updated_at, listed_commit, listed_prepare)
         VALUES ($1, $2, $3, 'pending-review', $4, $4, $5, $6) ON CONFLICT (id) DO NOTHING`,
        [agentId, record.developerId, JSON.stringify(record), listedAt, position.commit.toString(), position.prepare.toString()],
      );
      return;
    }
    case 'AgentApproved':
      await setStatus(client, agentId, 'beta', event.data.review.reviewedAt, event.data.betaStartDate);
      return;
    case 'AgentRejected':
      await setStatus(client, agentId, 'rejected', event.data.review.reviewedAt);
      return;
    case 'AgentPromoted':
      await setStatus(client, agentId, 'live', event.data.review.reviewedAt);
      return;
    case 'AgentResubmitted':
      await setStatus(client, agentId, 'pending-review', event.data.resubmittedAt);
      return;
    case 'AgentSignalSettingsUpdated': {
      const { updatedAt, ...changes } = event.data;
      await client.query('UPDATE agent_records SET record = record || $2::jsonb, updated_at = $3 WHERE id = $1', [agentId, JSON.stringify(changes), updatedAt]);
      return;
    }
    case 'AgentWebhookDisabled':
    case 'AgentWebhookEnabled':
      return; // the webhooks read model's (projections/webhooks/)
    case 'AgentDeleted':
      // The agent leaves every listing and lookup (404 from then on); its events stay for audit.
      await client.query('DELETE FROM agent_records WHERE id = $1', [agentId]);
      return;
    default:
      assertNever(event);
  }
}

function setStatus(client: PoolClient, agentId: string, status: string, at: string, betaStartDate?: string) {
  return client.query(`UPDATE agent_records SET beta_status = $2, updated_at = $3, beta_start_date = COALESCE($4, beta_start_date) WHERE id = $1`, [
    agentId,
    status,
    at,
    betaStartDate ?? null,
  ]);
}
