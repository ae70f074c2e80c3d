PORT=${PORT:-3000} bash <<'WALK'
set -euo pipefail
B=http://127.0.0.1:$PORT LOG=/tmp/app.log TOKENS=/tmp/walkthrough-tokens
touch "$TOKENS"

# call METHOD PATH [TOKEN] [JSON]: prints the answer's body; on an error status, prints the
# method, path, status and error envelope on stderr and fails.
call() {
  local out status
  out=$(curl -s -X "$1" "$B$2" ${3:+-H "authorization: Bearer $3"} \
    ${4:+-H 'content-type: application/json' -d "$4"} -w '\n%{http_code}') \
    || { echo "$1 $2: no answer; is the service up on $B?" >&2; return 1; }
  status=${out##*$'\n'}
  if [ "$status" -ge 400 ]; then echo "$1 $2 answered $status: ${out%$'\n'*}" >&2; return 1; fi
  printf '%s\n' "${out%$'\n'*}"
}
mails() { grep -F "\"to\":\"$1\"" "$LOG" || true; }
lookup() { call POST /api/auth/lookup '' '{"email":"'"$1"'","recaptcha":"dev","fingerprint":"curl"}' >/dev/null 2>/tmp/lookup.err; }

login() {  # email -> access token on stdout
  local token sent wait code
  token=$(grep "^$1 " "$TOKENS" | tail -1 | cut -d' ' -f2 || true)
  if [ -n "$token" ] && call GET /api/v1/users/me "$token" >/dev/null 2>&1; then echo "$token"; return; fi
  sent=$(mails "$1" | wc -l)
  if ! lookup "$1"; then
    cat /tmp/lookup.err >&2
    wait=$(sed 's/^[^{]*//' /tmp/lookup.err \
      | jq -r '.error.nextRequestAt // empty | sub("\\.[0-9]+Z$"; "Z") | fromdateiso8601 + 1 - now | ceil | [., 0] | max' 2>/dev/null || true)
    if [ -z "$wait" ] || [ "$wait" -gt 60 ]; then echo "no code for $1: see the answer above" >&2; return 1; fi
    echo "waiting ${wait}s for the next code for $1, as nextRequestAt says" >&2
    sleep "$wait"
    lookup "$1" || { cat /tmp/lookup.err >&2; return 1; }
  fi
  for _ in $(seq 50); do [ "$(mails "$1" | wc -l)" -gt "$sent" ] && break; sleep 0.2; done
  [ "$(mails "$1" | wc -l)" -gt "$sent" ] || { echo "no new mail to $1 in $LOG: is the service logging there?" >&2; return 1; }
  code=$(mails "$1" | tail -1 | jq -r .mail.text | grep -oE '[0-9]{6}' | head -1)
  token=$(call POST /api/auth/verify '' '{"email":"'"$1"'","code":"'"$code"'","recaptcha":"dev"}' | jq -r .data.tokens.accessToken)
  echo "$1 $token" >>"$TOKENS"
  echo "$token"
}
DEV=$(login dev@example.com); ADMIN=$(login admin@example.com); USER=$(login user@example.com)

# A developer lists an agent (the signing secret is shown once: keep it to sign the agent's signals).
LISTED=$(call POST /api/v1/developers/agents "$DEV" \
  '{"name":"Momentum","venue":"SPOT_VENUE","minAllocationUsd":50,"successFeePercent":10}')
AGENT=$(jq -r .data.id <<<"$LISTED") SECRET=$(jq -r .data.inboundWebhookSigningSecretReveal <<<"$LISTED")

# An administrator approves it: pending-review -> beta, with a review record.
call POST "/api/admin/developer-agents/$AGENT/approve" "$ADMIN" '{"notes":"ok","safetyScore":80}' | jq .data.betaStatus

# A user follows it with 1000 USD of the 10000 USD virtual wallet.
call POST /api/v1/users/me/subscriptions "$USER" \
  '{"agentId":"'"$AGENT"'","tradeMode":"AUTO_TRADING","walletContext":"virtual","allocationMode":"USD_AMOUNT","allocationAmountUsd":1000}' \
  | jq .data.subscription.allocatedUsd

# Every read model shows it.
call GET /api/v1/users/me/subscriptions "$USER" | jq '.data[0] | {agent, allocatedUsd, withdrawableUsd, allocationBalanceAudit}'
call GET "/api/v1/developers/agents/$AGENT/reviews" "$DEV" | jq .data.items
call GET "/api/v1/developers/agents/$AGENT/subscribers" "$DEV" | jq .data.items
call GET /api/v1/agents | jq '.data.items[] | {id, name, betaStatus}'
call GET /api | jq .data

# Add 250 USD from the wallet, withdraw 100 USD back to it, and see the wallet's balances.
call POST "/api/v1/users/me/subscriptions/$AGENT/allocation/add" "$USER" '{"amountUsd":250,"walletContext":"virtual"}' \
  | jq .data.subscription.allocatedUsd
call POST "/api/v1/users/me/subscriptions/$AGENT/allocation/withdraw" "$USER" '{"amountUsd":100,"walletContext":"virtual"}' \
  | jq '.data.subscription | {allocatedUsd, withdrawableUsd}'
call GET /api/v1/wallet "$USER" | jq .data.wallets

# The agent sends a signal to its webhook, signed with its secret: HMAC-SHA256 over the timestamp, a
# dot and the body's canonical JSON (RFC 8785: keys sorted, no spaces, as written here). Every
# follower pool opens the trade: 50 USD of margin moves from the pool to the trade.
signal() {  # JSON body (canonical) -> the webhook's answer
  local ts sig
  ts=$(date +%s%3N)
  sig=$(printf '%s.%s' "$ts" "$1" | openssl dgst -sha256 -hmac "$SECRET" | sed 's/^.*= //')
  curl -s -X POST "$B/api/v1/signals/$AGENT" -H 'content-type: application/json' \
    -H "x-svc-timestamp: $ts" -H "x-svc-signature: sha256=$sig" -d "$1"
}
call PUT /api/admin/market/prices "$ADMIN" '{"prices":{"SOL":150}}' >/dev/null
signal '{"action":"open","side":"buy","signalId":"walk-'"$(date +%s)"'","sizeUsd":50,"token":"SOL"}' \
  | jq '.data | {outcome, interpretation, executionResults}'
# Chatter is kept in the agent's inbox, unmatched.
signal '{"text":"gm traders, big week ahead"}' | jq .data.outcome
sleep 1  # the follower's views follow the agent's signals within the projection lag
call GET /api/v1/users/me/subscriptions "$USER" | jq '.data[0] | {inTradesUsd, withdrawableUsd}'
TRADE=$(call GET '/api/v1/trades?status=open' "$USER" | jq -r '.data.items[0].id')
call GET "/api/v1/developers/agents/$AGENT/signals" "$DEV" | jq '.data.items[] | {signalId, outcome, ruleVersion}'

# The price rises 10%; the user closes the trade: its margin and PnL (net of the venue's fees) go back to the pool.
call PUT /api/admin/market/prices "$ADMIN" '{"prices":{"SOL":165}}' >/dev/null
call POST "/api/v1/trades/$TRADE/close" "$USER" | jq '.data | {status, closeReason, realizedPnlUsd, feesPaidUsd}'

# Stop following: the capital goes back to the wallet and the pool leaves the list (its history stays).
call DELETE "/api/v1/users/me/subscriptions/$AGENT?walletContext=virtual" "$USER" | jq .data.message
WALK
