// Request examples for the OpenAPI document, by operation id: what a first call usually sends.
// test/rest/openapi.test.ts checks each against its route's body schema and the document, so an
// example cannot drift from what the server takes.
const AGENT = 'agent_01jf8z6k3m4n5p6q7r8s9t0v1w';
const SESSION = 'sess_01jf8z7a2b3c4d5e6f7g8h9j0k';
const hello = [{ type: 'user.message', content: [{ type: 'text', text: 'Summarise the open issues in our tracker.' }] }];

export const REQUEST_EXAMPLES: Record<string, unknown> = {
  createUniverse: { slug: 'acme', name: 'Acme' },
  createAgent: { displayName: 'Support bot', prompt: 'You answer questions about our product, briefly.' },
  updateAgent: { displayName: 'Support bot (v2)', expectedVersion: 1 },
  createSession: { agent: AGENT, title: 'Issue triage', initial_events: hello },
  updateSession: { title: 'Issue triage (week 12)' },
  sendSessionEvents: { events: hello },
  createRoutine: {
    name: 'Morning triage',
    target: { type: 'new_session', agent: AGENT },
    initial_events: hello,
    schedule: { type: 'cron', expression: '0 9 * * 1-5', timezone: 'Europe/Berlin' },
  },
  createWebhookEndpoint: { url: 'https://hooks.example.com/agent-service', events: ['session.status_idle', 'session.status_terminated'] },
  createEnvironment: { name: 'python-data', packages: { pip: ['pandas==2.2.3'] } },
  createVault: { name: 'github' },
  putVaultCredential: { value: 'ghp_exampleexampleexample', host: 'api.github.com', header: 'Authorization', prefix: 'Bearer ' },
  createChannelConnection: { platform: 'loopback', label: 'Test channel', destination: { session: SESSION } },
  createChannelWebhook: { url: 'https://hooks.example.com/channels', events: ['message.received'] },
  createChannelBinding: { connection_id: 'chconn_01jf8z8c4d5e6f7g8h9j0k1m2n', thread_id: 'T-1', destination: { session: SESSION } },
};
