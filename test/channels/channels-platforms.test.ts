// Slack, Discord and WhatsApp against fakes speaking their wire formats: registration (and its
// refusal), inbound verification (Slack v0 signatures with a 5-minute window and
// url_verification; Discord Ed25519 and PING; WhatsApp's verify-token GET and X-Hub-Signature-256),
// each platform's connect flow, and a message answered through the platform's send API.
process.env.OUTBOUND_ALLOW ??= '127.0.0.0/8,::1';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { startFakeSlack, type FakeSlack } from '../fake-platforms/slack.js';
import { startFakeDiscord, type FakeDiscord } from '../fake-platforms/discord.js';
import { startFakeWhatsApp, type FakeWhatsApp } from '../fake-platforms/whatsapp.js';
import { readySession, waitFor } from '../helpers/sessions.js';
import { expectError } from '../helpers/agents.js';
import { prisma } from '../../src/db/client.js';

let s: TestServer;
let fake: FakeProvider;
let slack: FakeSlack;
let discord: FakeDiscord;
let wa: FakeWhatsApp;

beforeAll(async () => {
  [fake, slack, discord, wa] = await Promise.all([startFakeProvider(), startFakeSlack(), startFakeDiscord(), startFakeWhatsApp()]);
  slack.tokens.set('xoxb-good', { team_id: 'T0ACME', team: 'Acme', user_id: 'UBOT', bot_id: 'BBOT' });
  discord.tokens.set('discord-bot-token', { id: '112233445566778899', username: 'agentbot' });
  wa.tokens.set('EAAG-good', '1098765');
  wa.phones.set('1098765', { display_phone_number: '+1 555-010-0199', verified_name: 'Agent Co' });
  s = await startTestServer({
    anthropicApiKey: 'sk-ant',
    anthropicBaseUrl: fake.anthropicBaseUrl,
    slackApiBaseUrl: slack.url,
    discordApiBaseUrl: discord.url,
    whatsappApiBaseUrl: wa.url,
  });
});
afterAll(async () => {
  await s?.stop();
  await Promise.all([fake?.close(), slack?.close(), discord?.close(), wa?.close()]);
});
beforeEach(() => fake.reset());

const inbound = (appId: string) => `${s.base}/channels/inbound/${appId}`;

async function claimLink(conn: any) {
  expect((await fetch(conn.connect.url, { method: 'POST' })).status).toBe(200);
  return (await s.api('GET', `/channels/connections/${conn.id}`)).body;
}

describe('slack', () => {
  const SECRET = 'slack-signing-secret';
  let app: any;

  it("registers with auth.test; a refused token is invalid_spec naming Slack's error", async () => {
    const res = await s.api('POST', '/channels/apps', {
      body: { platform: 'slack', label: 'Acme Slack', credentials: { bot_token: 'xoxb-good', signing_secret: SECRET } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    app = res.body;
    expect(app).toMatchObject({ platform: 'slack', credential_keys: ['bot_token', 'signing_secret'], setup: { events_url: inbound(app.id) } });
    expect(slack.sent('auth.test').length).toBe(1);
    expect(slack.calls[0]!.headers.authorization).toBe('Bearer xoxb-good');
    const bad = await s.api('POST', '/channels/apps', {
      body: { platform: 'slack', label: 'x', credentials: { bot_token: 'xoxb-bad', signing_secret: SECRET } },
    });
    expectError(bad, 422, 'invalid_spec');
    expect(bad.body.error.message).toContain('invalid_auth');
    expectError(
      await s.api('POST', '/channels/apps', { body: { platform: 'slack', label: 'x', credentials: { bot_token: 'xoxb-good' } } }),
      400,
      'invalid_request',
    );
  });

  it('verifies v0 signatures (5-minute window) and answers url_verification', async () => {
    const challenge = JSON.stringify({ token: 'legacy', challenge: 'c-3po', type: 'url_verification' });
    const ok = await slack.send(inbound(app.id), SECRET, challenge);
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual({ challenge: 'c-3po' });
    expect((await slack.send(inbound(app.id), 'wrong-secret', challenge)).status).toBe(401);
    expect((await slack.send(inbound(app.id), SECRET, challenge, 'application/json', { timestamp: Math.floor(Date.now() / 1000) - 600 })).status).toBe(401);
    const tampered = await slack.send(inbound(app.id), SECRET, challenge, 'application/json', { signature: 'v0=' + '0'.repeat(64) });
    expect(tampered.status).toBe(401);
    expect(tampered.json).toEqual({ error: { code: 'invalid_token', message: expect.any(String) } });
  });

  it('link flow: the hosted page connects the workspace; a message becomes a turn answered with chat.postMessage, :eyes: meanwhile; a retry counts once', async () => {
    const { session } = await readySession(s);
    const conn = (await s.api('POST', '/channels/connections', { body: { platform: 'slack', label: 'Acme', destination: { session: session.id } } })).body;
    expect(conn.connect.url).toMatch(new RegExp(`^${s.url}/v1/connect/`));
    expect(await claimLink(conn)).toMatchObject({ status: 'CONNECTED', channel_id: 'T0ACME' });

    fake.enqueue({ kind: 'text', text: 'On it.' });
    const event = JSON.stringify({
      token: 'legacy',
      team_id: 'T0ACME',
      api_app_id: 'A1',
      type: 'event_callback',
      event_id: 'Ev001',
      event_time: 1,
      event: { type: 'message', channel: 'C0GENERAL', channel_type: 'channel', user: 'U123', text: 'deploy please', ts: '1700000001.000100' },
    });
    const first = await slack.send(inbound(app.id), SECRET, event);
    expect(first.status).toBe(200);
    await waitFor(async () => slack.sent('chat.postMessage').some((m) => m.text === 'On it.'), 15_000, 'reply');
    expect(slack.sent('chat.postMessage').find((m) => m.text === 'On it.')).toMatchObject({ channel: 'C0GENERAL' });
    expect(slack.sent('reactions.add')).toContainEqual({ channel: 'C0GENERAL', timestamp: '1700000001.000100', name: 'eyes' });
    await waitFor(async () => slack.sent('reactions.remove').length > 0, 5000, 'marker cleared');
    // Slack retries (X-Slack-Retry-Num) and mentions arrive twice: one turn.
    await slack.send(inbound(app.id), SECRET, event);
    const mention = JSON.parse(event);
    mention.event_id = 'Ev002';
    mention.event.type = 'app_mention';
    await slack.send(inbound(app.id), SECRET, JSON.stringify(mention));
    await new Promise((r) => setTimeout(r, 500));
    const inputs = await prisma.sessionEvent.count({ where: { sessionId: session.id, type: 'user.message' } });
    expect(inputs).toBe(1);
  });

  it('invite_user sends the Slack user the connect link in a direct message', async () => {
    const conn = (await s.api('POST', '/channels/connections', { body: { platform: 'slack', invite_user: 'U777' } })).body;
    expect(slack.sent('conversations.open')).toContainEqual({ users: 'U777' });
    const dm = slack.sent('chat.postMessage').find((m) => m.channel === 'DU777')!;
    expect(dm.text).toContain(conn.connect.url);
  });
});

describe('discord', () => {
  let app: any;

  it('registers with GET /users/@me; setup names the interactions URL and the bot invite', async () => {
    const res = await s.api('POST', '/channels/apps', {
      body: { platform: 'discord', label: 'Guild bot', credentials: { bot_token: 'discord-bot-token', public_key: discord.publicKeyHex } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    app = res.body;
    expect(app.setup).toEqual({ webhook_url: inbound(app.id), invite_url: expect.stringContaining('client_id=112233445566778899') });
    expect(discord.sent('GET', '/users/@me')[0]!.headers.authorization).toBe('Bot discord-bot-token');
    expectError(
      await s.api('POST', '/channels/apps', {
        body: { platform: 'discord', label: 'x', credentials: { bot_token: 'nope', public_key: discord.publicKeyHex } },
      }),
      422,
      'invalid_spec',
    );
    expectError(
      await s.api('POST', '/channels/apps', {
        body: { platform: 'discord', label: 'x', credentials: { bot_token: 'discord-bot-token', public_key: 'not-hex' } },
      }),
      422,
      'invalid_spec',
    );
  });

  it('answers PING with PONG when the Ed25519 signature verifies; a forged or missing one is 401', async () => {
    const pong = await discord.interact(inbound(app.id), { id: '1', application_id: '112233445566778899', type: 1, token: 't', version: 1 });
    expect(pong.status).toBe(200);
    expect(pong.json).toEqual({ type: 1 });
    expect((await discord.interact(inbound(app.id), { type: 1 }, { forge: true })).status).toBe(401);
    const bare = await s.fetch(inbound(app.id), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"type":1}' });
    expect(bare.status).toBe(401);
  });

  it('a slash command is deferred ("thinking…") and answered by editing the original response', async () => {
    const { session } = await readySession(s);
    const conn = (await s.api('POST', '/channels/connections', { body: { platform: 'discord', destination: { session: session.id } } })).body;
    expect(await claimLink(conn)).toMatchObject({ status: 'CONNECTED', channel_id: '112233445566778899' });
    fake.enqueue({ kind: 'text', text: 'Pong from the agent' });
    const res = await discord.interact(inbound(app.id), {
      id: '900000000000000001',
      application_id: '112233445566778899',
      type: 2,
      token: 'interaction-token-abc',
      version: 1,
      guild_id: '5000',
      channel_id: '6000',
      member: { user: { id: '42', username: 'ada', global_name: 'Ada' } },
      data: { id: '77', name: 'ask', type: 1, options: [{ name: 'question', type: 3, value: 'are you there?' }] },
    });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ type: 5 });
    await waitFor(async () => discord.sent('PATCH', '/webhooks/').length > 0, 15_000, 'edited response');
    const edit = discord.sent('PATCH', '/webhooks/')[0]!;
    expect(edit.path).toBe('/webhooks/112233445566778899/interaction-token-abc/messages/@original');
    expect(edit.body).toEqual({ content: 'Pong from the agent' });
    const input = await prisma.sessionEvent.findFirst({ where: { sessionId: session.id, type: 'user.message' } });
    expect((input!.payload as any).content).toEqual([{ type: 'text', text: 'are you there?' }]);
  });

  it('posting into a thread uses POST /channels/{id}/messages with the bot token', async () => {
    const conn = (await s.api('GET', '/channels/connections')).body.data.find((c: any) => c.platform === 'discord' && c.status === 'CONNECTED');
    const posted = await s.api('POST', `/channels/connections/${conn.id}/threads/6001/messages`, {
      body: { parts: [{ type: 'text', text: 'Build finished' }] },
    });
    expect(posted.status, JSON.stringify(posted.body)).toBe(200);
    const sent = discord.sent('POST', '/channels/6001/messages')[0]!;
    expect(sent.headers.authorization).toBe('Bot discord-bot-token');
    expect(sent.body).toEqual({ content: 'Build finished' });
    expect(posted.body.message_id).toMatch(/^\d+$/);
  });
});

describe('whatsapp', () => {
  const APP_SECRET = 'meta-app-secret';
  let app: any;

  it('registers with GET /{phone_number_id}; setup lists the webhook URL and verify token; the verification GET answers the challenge', async () => {
    const res = await s.api('POST', '/channels/apps', {
      body: { platform: 'whatsapp', label: 'Support line', credentials: { access_token: 'EAAG-good', phone_number_id: '1098765', app_secret: APP_SECRET } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    app = res.body;
    expect(app.setup).toEqual({ webhook_url: inbound(app.id), verify_token: expect.stringMatching(/^[A-Za-z0-9_-]{16,}$/) });
    const ok = await s.fetch(`${inbound(app.id)}?hub.mode=subscribe&hub.verify_token=${app.setup.verify_token}&hub.challenge=1158201444`);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe('1158201444');
    expect((await s.fetch(`${inbound(app.id)}?hub.mode=subscribe&hub.verify_token=wrong&hub.challenge=1`)).status).toBe(401);
    const refused = await s.api('POST', '/channels/apps', {
      body: { platform: 'whatsapp', label: 'x', credentials: { access_token: 'EAAG-bad', phone_number_id: '1098765', app_secret: 'x' } },
    });
    expectError(refused, 422, 'invalid_spec');
    expect(refused.body.error.message).toContain('Invalid OAuth access token');
  });

  it('code flow: the end user sends the code; then a message is a turn answered with POST /{phone}/messages', async () => {
    const { session } = await readySession(s);
    const conn = (await s.api('POST', '/channels/connections', { body: { platform: 'whatsapp', destination: { session: session.id } } })).body;
    expect(conn.connect).toEqual({
      url: expect.stringMatching(/^https:\/\/wa\.me\/15550100199\?text=CONNECT-\d{6}$/),
      phone: '+1 555-010-0199',
      code: expect.stringMatching(/^CONNECT-\d{6}$/),
      expires_at: expect.any(String),
    });
    expectError(await s.api('POST', '/channels/connections', { body: { platform: 'whatsapp', callback_url: 'https://x.example/cb' } }), 400, 'invalid_request');
    const claim = await wa.userMessage(inbound(app.id), APP_SECRET, '1098765', { from: '4915112345678', text: `Hi! ${conn.connect.code}` });
    expect(claim.status).toBe(200);
    await waitFor(async () => (await s.api('GET', `/channels/connections/${conn.id}`)).body.status === 'CONNECTED', 10_000, 'claimed');
    expect((await s.api('GET', `/channels/connections/${conn.id}`)).body.channel_id).toBe('4915112345678');

    fake.enqueue({ kind: 'text', text: 'Your parcel arrives Tuesday.' });
    const msg = await wa.userMessage(inbound(app.id), APP_SECRET, '1098765', { from: '4915112345678', text: 'where is my parcel?' });
    await waitFor(async () => wa.sent().some((m) => m.text.body === 'Your parcel arrives Tuesday.'), 15_000, 'reply');
    expect(wa.sent().find((m) => m.text.body === 'Your parcel arrives Tuesday.')).toEqual({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: '4915112345678',
      type: 'text',
      text: { body: 'Your parcel arrives Tuesday.', preview_url: false },
      context: { message_id: msg.id },
    });
    expect(wa.calls.some((c) => c.body?.status === 'read' && c.body.message_id === msg.id)).toBe(true);
  });

  it('a bad X-Hub-Signature-256 is 401 and records nothing; an image is fetched through the media API', async () => {
    const before = await prisma.channelInbound.count();
    const forged = await wa.userMessage(
      inbound(app.id),
      APP_SECRET,
      '1098765',
      { from: '4915112345678', text: 'forged' },
      { signature: 'sha256=' + 'a'.repeat(64) },
    );
    expect(forged.status).toBe(401);
    expect(await prisma.channelInbound.count()).toBe(before);

    const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
    const mediaId = wa.addMedia(png, 'image/png');
    fake.enqueue({ kind: 'text', text: 'A PNG header, nice.' });
    await wa.userMessage(inbound(app.id), APP_SECRET, '1098765', { from: '4915112345678', image: { id: mediaId, mime: 'image/png', caption: 'what is this' } });
    await waitFor(async () => wa.sent().some((m) => m.text.body === 'A PNG header, nice.'), 15_000, 'reply to image');
    expect(fake.requests.at(-1)!.body.messages.at(-1).content).toMatchObject([
      { type: 'text', text: 'what is this' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png.toString('base64') } },
    ]);
  });
});
