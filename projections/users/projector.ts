import { assertNever } from '../../domain/shared/decider.ts';
import { userEventTypes, type UserEvent } from '../../domain/user/events.ts';
import { usernameKey, userIdOfStream } from '../../domain/user/fields.ts';
import type { PoolClient } from '../../infra/db.ts';
import type { Projector } from '../projector.ts';
import { usersMigrations } from './schema.ts';

const handled = new Set<string>(userEventTypes);

export const usersProjector: Projector = {
  name: 'users',
  migrations: usersMigrations,
  tables: ['users', 'user_sessions', 'user_social_accounts'],
  async apply(client, event) {
    if (!handled.has(event.type) || userIdOfStream(event.streamName) === null) return;
    await applyUserEvent(client, { type: event.type, data: event.data } as UserEvent);
  },
};

async function applyUserEvent(client: PoolClient, event: UserEvent): Promise<void> {
  switch (event.type) {
    case 'UserRegistered': {
      const d = event.data;
      const s = d.signup;
      await client.query(
        `INSERT INTO users (id, email, username, username_key, role, tier, virtual_wallet_mode, language_code,
           receive_marketing_offers, agreed_to_terms, promo_code, referral_code, referrer_username, referrer_user_id,
           created_at, updated_at)
         VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$15) ON CONFLICT (id) DO NOTHING`,
        [
          d.userId,
          d.email,
          d.username,
          usernameKey(d.username),
          d.role,
          d.tier,
          d.virtualWalletMode,
          d.languageCode,
          s.receiveMarketingOffers ?? null,
          s.agreedToTerms ?? null,
          s.promoCode ?? null,
          s.referralCode ?? null,
          s.referrerUsername ?? null,
          s.referrerUserId ?? null,
          d.registeredAt,
        ],
      );
      return;
    }
    case 'UserProfileUpdated': {
      const d = event.data;
      await client.query(
        `UPDATE users SET avatar_filename = COALESCE($2, avatar_filename), language_code = COALESCE($3, language_code),
           virtual_wallet_mode = COALESCE($4, virtual_wallet_mode), updated_at = $5 WHERE id = $1`,
        [d.userId, d.avatarFilename ?? null, d.languageCode ?? null, d.virtualWalletMode ?? null, d.updatedAt],
      );
      return;
    }
    case 'UsernameChanged':
      await client.query('UPDATE users SET username = $2, username_key = $3, updated_at = $4 WHERE id = $1', [
        event.data.userId,
        event.data.username,
        usernameKey(event.data.username),
        event.data.changedAt,
      ]);
      return;
    case 'TierChanged':
      await client.query('UPDATE users SET tier = $2, updated_at = $3 WHERE id = $1', [event.data.userId, event.data.tier, event.data.changedAt]);
      return;
    case 'RoleGranted':
      await client.query('UPDATE users SET role = $2, updated_at = $3 WHERE id = $1', [event.data.userId, event.data.role, event.data.grantedAt]);
      return;
    case 'SessionStarted': {
      const d = event.data;
      await client.query(
        `INSERT INTO user_sessions (id, user_id, user_agent, created_at, last_used_at, expires_at)
         VALUES ($1,$2,$3,$4,$4,$5) ON CONFLICT (id) DO NOTHING`,
        [d.sessionId, d.userId, d.userAgent, d.startedAt, d.expiresAt],
      );
      return;
    }
    case 'SessionRefreshed':
      await client.query('UPDATE user_sessions SET last_used_at = $2, expires_at = $3 WHERE id = $1', [
        event.data.sessionId,
        event.data.refreshedAt,
        event.data.expiresAt,
      ]);
      return;
    case 'SessionEnded':
      await client.query('UPDATE user_sessions SET ended_at = $2, end_reason = $3 WHERE id = $1', [
        event.data.sessionId,
        event.data.endedAt,
        event.data.reason,
      ]);
      return;
    case 'SocialAccountLinked': {
      const d = event.data;
      await client.query(
        `INSERT INTO user_social_accounts (user_id, provider, subject, email, linked_at) VALUES ($1,$2,$3,$4,$5)
         ON CONFLICT (user_id, provider) DO UPDATE SET subject = $3, email = $4, linked_at = $5`,
        [d.userId, d.provider, d.subject, d.email, d.linkedAt],
      );
      return;
    }
    case 'MfaEnabled':
      await client.query('UPDATE users SET mfa_enabled = true, mfa_enabled_at = $2, updated_at = $2 WHERE id = $1', [event.data.userId, event.data.enabledAt]);
      return;
    case 'MfaDisabled':
    case 'MfaReset':
      await client.query('UPDATE users SET mfa_enabled = false, mfa_enabled_at = NULL, mfa_recovery_codes_left = 0, updated_at = $2 WHERE id = $1', [
        event.data.userId,
        event.type === 'MfaReset' ? event.data.resetAt : event.data.disabledAt,
      ]);
      return;
    // Only how many codes are left: the digests stay in the events.
    case 'MfaRecoveryCodesIssued':
      await client.query('UPDATE users SET mfa_recovery_codes_left = $2, updated_at = $3 WHERE id = $1', [
        event.data.userId,
        event.data.codeDigests.length,
        event.data.issuedAt,
      ]);
      return;
    case 'MfaRecoveryCodeUsed':
      await client.query('UPDATE users SET mfa_recovery_codes_left = mfa_recovery_codes_left - 1, updated_at = $2 WHERE id = $1', [
        event.data.userId,
        event.data.usedAt,
      ]);
      return;
    case 'GuideAgentChosen':
      await client.query('UPDATE users SET guide_agent_id = $2, updated_at = $3 WHERE id = $1', [
        event.data.userId,
        event.data.guideAgentId,
        event.data.chosenAt,
      ]);
      return;
    case 'InterestsReplaced':
      await client.query('UPDATE users SET interests = $2, updated_at = $3 WHERE id = $1', [event.data.userId, event.data.interests, event.data.replacedAt]);
      return;
    case 'AgentPinned':
      await client.query(
        'UPDATE users SET pinned_agent_ids = array_append(pinned_agent_ids, $2), updated_at = $3 WHERE id = $1 AND NOT $2 = ANY(pinned_agent_ids)',
        [event.data.userId, event.data.agentId, event.data.pinnedAt],
      );
      return;
    case 'AgentUnpinned':
      await client.query('UPDATE users SET pinned_agent_ids = array_remove(pinned_agent_ids, $2), updated_at = $3 WHERE id = $1', [
        event.data.userId,
        event.data.agentId,
        event.data.unpinnedAt,
      ]);
      return;
    default:
      assertNever(event);
  }
}
