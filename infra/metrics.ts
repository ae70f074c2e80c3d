import client from 'prom-client';

// One registry for the process; /metrics serves it.
export const registry = new client.Registry();
client.collectDefaultMetrics({ register: registry });

export const httpDuration = new client.Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP request latency',
  labelNames: ['method', 'route', 'status'],
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers: [registry],
});

export const commandsTotal = new client.Counter({
  name: 'commands_total',
  help: 'Commands handled, by aggregate (stream category) and outcome',
  labelNames: ['aggregate', 'outcome'],
  registers: [registry],
});

export const projectorLagSeconds = new client.Histogram({
  name: 'projector_lag_seconds',
  help: 'Time from an event being appended to its projection being committed',
  labelNames: ['projector'],
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
  registers: [registry],
});

export const projectorLagEvents = new client.Gauge({
  name: 'projector_lag_events',
  help: 'Events received by a projector and not yet committed',
  labelNames: ['projector'],
  registers: [registry],
});

export const projectorLagMs = new client.Gauge({
  name: 'projector_lag_milliseconds',
  help: 'Age of the oldest event a projector has received and not yet committed (0 when caught up)',
  labelNames: ['projector'],
  registers: [registry],
});

export const projectorStalled = new client.Gauge({
  name: 'projector_stalled',
  help: '1 while a projector is held back by an event it failed to apply (the others go on), else 0',
  labelNames: ['projector'],
  registers: [registry],
});

export const mcpToolCalls = new client.Histogram({
  name: 'mcp_tool_call_duration_seconds',
  help: 'MCP tool calls by tool and outcome (ok, refused: a domain refusal, error: anything else); the count is the calls',
  labelNames: ['tool', 'outcome'],
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers: [registry],
});
