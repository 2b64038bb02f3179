// Channels over GraphQL: typed inputs (enums, the destination object, @oneOf message parts),
// the same validation as REST, and the channelEvents subscription over graphql-sse carrying the
// payloads channel webhooks get.
import { createClient } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { gqlCode } from '../helpers/agents.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.stop();
});

const CONNECTION = 'id platform channelId label status boundSession { id label } connect { url expiresAt } createdAt';

describe('channels over GraphQL', () => {
  it('creates a loopback connection with typed input, claims it, posts a @oneOf part and reads the outbox', async () => {
    const created = await s.gql<{ createChannelConnection: any }>(
      `mutation($input: CreateChannelConnectionInput!) { createChannelConnection(input: $input) { ${CONNECTION} } }`,
      { input: { platform: 'loopback', label: 'From GraphQL', metadata: { source: 'gql' } } },
    );
    expect(created.body.errors).toBeUndefined();
    const conn = created.body.data!.createChannelConnection;
    expect(conn).toMatchObject({
      platform: 'loopback',
      status: 'PENDING',
      label: 'From GraphQL',
      channelId: null,
      boundSession: null,
      connect: { url: expect.stringContaining('/v1/connect/') },
    });
    expect((await fetch(conn.connect.url, { method: 'POST' })).status).toBe(200);

    const posted = await s.gql<{ postChannelMessage: any }>(
      `mutation($id: String!, $input: PostChannelMessageInput!) { postChannelMessage(connectionId: $id, threadId: "g", input: $input) { connectionId threadId messageId } }`,
      { id: conn.id, input: { parts: [{ markdown: { text: '**hello**' } }], displayName: 'Bot' } },
    );
    expect(posted.body.errors).toBeUndefined();
    expect(posted.body.data!.postChannelMessage).toMatchObject({ connectionId: conn.id, threadId: 'g', messageId: expect.stringMatching(/^lbmsg_/) });
    const outbox = await s.gql<{ loopbackOutbox: any[] }>(
      `query($id: String!) { loopbackOutbox(connectionId: $id) { kind text displayName parts { ... on ChannelMarkdownPart { type text } } } }`,
      { id: conn.id },
    );
    expect(outbox.body.data!.loopbackOutbox).toEqual([
      { kind: 'message', text: '**hello**', displayName: 'Bot', parts: [{ type: 'markdown', text: '**hello**' }] },
    ]);

    const caps = await s.gql<{ channelCapabilities: any }>(
      `query($id: String!) { channelCapabilities(connectionId: $id) { platform capabilities { threads markers modals } } }`,
      { id: conn.id },
    );
    expect(caps.body.data!.channelCapabilities).toEqual({ platform: 'loopback', capabilities: { threads: true, markers: true, modals: false } });
  });

  it('validates like REST: label length, exactly one destination, unknown enum values', async () => {
    const long = await s.gql(`mutation($input: CreateChannelConnectionInput!) { createChannelConnection(input: $input) { id } }`, {
      input: { platform: 'loopback', label: 'x'.repeat(121) },
    });
    expect(gqlCode(long)).toBe('invalid_request');
    const both = await s.gql(`mutation($input: CreateChannelConnectionInput!) { createChannelConnection(input: $input) { id } }`, {
      input: { platform: 'loopback', destination: { session: 'sess_a', webhook: 'whep_b' } },
    });
    expect(gqlCode(both)).toBe('invalid_request');
    expect(both.body.errors![0].message).toContain('exactly one of session or webhook');
    const platform = await s.gql(`mutation($input: CreateChannelConnectionInput!) { createChannelConnection(input: $input) { id } }`, {
      input: { platform: 'myspace' },
    });
    expect(platform.body.errors?.length).toBeGreaterThan(0);
    const app = await s.gql(`mutation($input: CreateChannelAppInput!) { createChannelApp(input: $input) { id } }`, {
      input: { platform: 'imessage', label: 'x', credentials: { api_key: 'k', phone_number: 'p', webhook_secret: 'w' } },
    });
    expect(gqlCode(app)).toBe('coming_soon');
  });

  it('the channelEvents subscription receives channel.connected with the connection metadata', async () => {
    const conn = (await s.api('POST', '/channels/connections', { body: { platform: 'loopback', metadata: { plan: 'pro' } } })).body;
    const client = createClient({ url: `${s.url}/graphql/stream`, headers: { authorization: `Bearer ${s.adminToken}` }, retryAttempts: 0 });
    const event = await new Promise<any>((resolve, reject) => {
      const dispose = client.subscribe<{ channelEvents: any }>(
        { query: 'subscription { channelEvents { id type createdAt data } }' },
        {
          next: (r) => {
            if (r.errors) return reject(new Error(JSON.stringify(r.errors)));
            dispose();
            resolve(r.data!.channelEvents);
          },
          error: reject,
          complete: () => undefined,
        },
      );
      setTimeout(() => void fetch(conn.connect.url, { method: 'POST' }), 300);
    });
    client.dispose();
    expect(event).toMatchObject({ id: expect.stringMatching(/^evt_/), type: 'channel_connected', data: { connection_id: conn.id, metadata: { plan: 'pro' } } });
  });
});
