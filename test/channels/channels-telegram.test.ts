// Telegram end to end against a fake Bot API speaking Telegram's wire format: registration
// (getMe + setWebhook with a secret token) and its refusal, the `/start <token>` claim, a
// message that becomes a session turn whose answer is posted back with sendMessage (typing
// while it runs), a repeated update processed once, a bad secret refused with nothing
// recorded, a photo that becomes a session file the model sees, and the bot being blocked.
process.env.OUTBOUND_ALLOW ??= '127.0.0.0/8,::1';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { startFakeTelegram, type FakeTelegram } from '../fake-platforms/telegram.js';
import { readySession, waitFor, waitForEvents, history, collectSse } from '../helpers/sessions.js';
import { expectError } from '../helpers/agents.js';
import { prisma } from '../../src/db/client.js';
import { requeueStalledReplies } from '../../src/channels/replies.js';

const TOKEN = '700100:AAE-fake-telegram-token_x';
let s: TestServer;
let fake: FakeProvider;
let tg: FakeTelegram;

beforeAll(async () => {
  fake = await startFakeProvider();
  tg = await startFakeTelegram();
  tg.addBot(TOKEN, 'agent_test_bot');
  s = await startTestServer({ anthropicApiKey: 'sk-ant', anthropicBaseUrl: fake.anthropicBaseUrl, telegramApiBaseUrl: tg.url });
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
  await tg?.close();
});
beforeEach(() => fake.reset());

async function telegramApp(label = 'Support bot') {
  const res = await s.api('POST', '/channels/apps', { body: { platform: 'telegram', label, credentials: { bot_token: TOKEN } } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** A connected chat bound to a fresh session. */
async function connectedChat(chatId: number) {
  const { session } = await readySession(s);
  const conn = (await s.api('POST', '/channels/connections', { body: { platform: 'telegram', label: `chat ${chatId}`, destination: { session: session.id } } }))
    .body;
  const token = new URL(conn.connect.url).searchParams.get('start')!;
  expect((await tg.userMessage(TOKEN, { chatId, text: `/start ${token}` })).status).toBe(200);
  await waitFor(async () => (await s.api('GET', `/channels/connections/${conn.id}`)).body.status === 'CONNECTED', 10_000, 'claim');
  return { session, conn };
}

const repliesTo = (chatId: number) => tg.sent('sendMessage', TOKEN).filter((m) => Number(m.chat_id) === chatId);

describe('telegram apps', () => {
  it('registration calls getMe and setWebhook (inbound URL + secret token); credentials are never echoed', async () => {
    const app = await telegramApp();
    const inbound = `${s.url}/v1/channels/inbound/${app.id}`;
    expect(app).toEqual({
      id: expect.stringMatching(/^chapp_/),
      platform: 'telegram',
      label: 'Support bot',
      status: 'active',
      credential_keys: ['bot_token'],
      created_at: expect.any(String),
      setup: { webhook_url: inbound },
    });
    const bot = tg.bots.get(TOKEN)!;
    expect(bot.webhook).toMatchObject({ url: inbound, secret_token: expect.stringMatching(/^[A-Za-z0-9_-]{16,256}$/) });
    expect(tg.sent('getMe', TOKEN).length).toBeGreaterThan(0);
    const list = await s.api('GET', '/channels/apps');
    expect(list.body.data.map((a: any) => a.id)).toContain(app.id);
    for (const body of [app, list.body, (await s.api('GET', `/channels/apps/${app.id}`)).body]) expect(JSON.stringify(body)).not.toContain(TOKEN);
    // At rest the token is sealed, never plain.
    const row = await prisma.channelApp.findUniqueOrThrow({ where: { id: app.id } });
    expect(row.credentials).not.toContain(TOKEN);
  });

  it('a token Telegram refuses fails the create with invalid_spec naming the answer, and stores nothing', async () => {
    const before = (await s.api('GET', '/channels/apps')).body.data.length;
    const res = await s.api('POST', '/channels/apps', { body: { platform: 'telegram', label: 'Bad', credentials: { bot_token: '1:wrong' } } });
    expectError(res, 422, 'invalid_spec');
    expect(res.body.error.message).toMatch(/telegram.*Unauthorized/);
    expect(res.body.error.message).not.toContain('1:wrong');
    expect((await s.api('GET', '/channels/apps')).body.data.length).toBe(before);
  });

  it('validates the body: required credential keys, label length, imessage is coming soon', async () => {
    expectError(await s.api('POST', '/channels/apps', { body: { platform: 'telegram', label: 'x', credentials: {} } }), 400, 'invalid_request');
    expectError(
      await s.api('POST', '/channels/apps', { body: { platform: 'telegram', label: 'x'.repeat(121), credentials: { bot_token: TOKEN } } }),
      400,
      'invalid_request',
    );
    expectError(await s.api('POST', '/channels/apps', { body: { platform: 'discord', label: 'x', credentials: { bot_token: 't' } } }), 400, 'invalid_request');
    expectError(
      await s.api('POST', '/channels/apps', {
        body: { platform: 'imessage', label: 'x', credentials: { api_key: 'k', phone_number: '+1', webhook_secret: 's' } },
      }),
      501,
      'coming_soon',
    );
    expectError(await s.api('POST', '/channels/apps', { body: { platform: 'loopback', label: 'x', credentials: {} } }), 400, 'invalid_request');
  });

  it('PATCH replaces the credential bag and registers again; a refused rotation changes nothing', async () => {
    const app = await telegramApp('Rotating');
    const calls = tg.sent('setWebhook', TOKEN).length;
    const renamed = await s.api('PATCH', `/channels/apps/${app.id}`, { body: { label: 'Renamed' } });
    expect(renamed.body).toMatchObject({ label: 'Renamed', credential_keys: ['bot_token'] });
    expect(tg.sent('setWebhook', TOKEN).length).toBe(calls);
    const rotated = await s.api('PATCH', `/channels/apps/${app.id}`, { body: { credentials: { bot_token: TOKEN, note: 'rotated' } } });
    expect(rotated.status).toBe(200);
    expect(rotated.body.credential_keys).toEqual(['bot_token', 'note']);
    expect(tg.sent('setWebhook', TOKEN).length).toBe(calls + 1);
    expectError(await s.api('PATCH', `/channels/apps/${app.id}`, { body: { credentials: { bot_token: '2:nope' } } }), 422, 'invalid_spec');
    expect((await s.api('GET', `/channels/apps/${app.id}`)).body.credential_keys).toEqual(['bot_token', 'note']);
    expect((await s.api('DELETE', `/channels/apps/${app.id}`)).body).toEqual({ ok: true });
    expectError(await s.api('GET', `/channels/apps/${app.id}`), 404, 'not_found');
  });
});

describe('telegram conversations', () => {
  let appId: string;
  beforeAll(async () => {
    // One bot for the conversations below (apps created above were deleted or are spares).
    for (const a of (await s.api('GET', '/channels/apps')).body.data) await s.api('DELETE', `/channels/apps/${a.id}`);
    appId = (await telegramApp('Conversations')).id;
  });

  it('/start <token> claims the connection: CONNECTED with the chat id, channel.connected with the metadata', async () => {
    const { session } = await readySession(s);
    const created = await s.api('POST', '/channels/connections', {
      body: { platform: 'telegram', label: 'Ada', metadata: { customer: '42' }, destination: { session: session.id } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const conn = created.body;
    expect(conn).toEqual({
      id: expect.stringMatching(/^chconn_/),
      platform: 'telegram',
      channel_id: null,
      label: 'Ada',
      status: 'PENDING',
      bound_session: { id: session.id, label: session.id },
      created_at: expect.any(String),
      connect: { url: expect.stringMatching(/^https:\/\/t\.me\/agent_test_bot\?start=[A-Za-z0-9_-]{16,64}$/), expires_at: expect.any(String) },
    });
    expect(Date.parse(conn.connect.expires_at) - Date.now()).toBeGreaterThan(23 * 3600_000);
    const token = new URL(conn.connect.url).searchParams.get('start')!;

    const frames = collectSse(`${s.base}/channels/events/stream`, s.adminToken, (f) => f.some((x) => x.event === 'channel.connected'));
    await new Promise((r) => setTimeout(r, 200));
    expect((await tg.userMessage(TOKEN, { chatId: 5551, text: `/start ${token}` })).status).toBe(200);
    const connected = (await frames).find((f) => f.event === 'channel.connected')!;
    expect(connected.data).toMatchObject({
      id: connected.id,
      type: 'channel.connected',
      createdAt: expect.any(String),
      data: { connection_id: conn.id, app_id: appId, channel_id: '5551', metadata: { customer: '42' } },
    });
    const now = (await s.api('GET', `/channels/connections/${conn.id}`)).body;
    expect(now).toMatchObject({ status: 'CONNECTED', channel_id: '5551' });
    expect(now).not.toHaveProperty('connect');
    await waitFor(async () => repliesTo(5551).some((m) => /Connected/.test(m.text)), 5000, 'confirmation');
    // The link is spent: a second /start with it does not claim anything.
    const other = (await s.api('POST', '/channels/connections', { body: { platform: 'telegram' } })).body;
    await tg.userMessage(TOKEN, { chatId: 6000, text: `/start ${token}` });
    await new Promise((r) => setTimeout(r, 300));
    expect((await s.api('GET', `/channels/connections/${other.id}`)).body.status).toBe('PENDING');
  });

  it('a message becomes a turn; the final answer is posted back into the chat with typing meanwhile; a repeated update counts once', async () => {
    const { session } = await connectedChat(5552);
    fake.enqueue({ kind: 'text', text: 'Hello Ada, how can I help?', chunks: 3 });
    const sent = await tg.userMessage(TOKEN, { chatId: 5552, text: 'hi there' });
    expect(sent.status).toBe(200);
    await waitFor(async () => repliesTo(5552).some((m) => m.text === 'Hello Ada, how can I help?'), 15_000, 'reply posted');
    const reply = repliesTo(5552).find((m) => m.text === 'Hello Ada, how can I help?')!;
    expect(reply.reply_parameters).toMatchObject({ message_id: sent.update.message.message_id });
    expect(tg.sent('sendChatAction', TOKEN).some((a) => Number(a.chat_id) === 5552 && a.action === 'typing')).toBe(true);
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    expect(events.filter((e) => e.type === 'user.message').map((e) => e.content)).toEqual([[{ type: 'text', text: 'hi there' }]]);
    expect(fake.requests.at(-1)!.body.messages.at(-1)).toMatchObject({ role: 'user', content: [{ type: 'text', text: 'hi there' }] });

    // Telegram retries an update it thinks was not delivered: processed once.
    const again = await tg.deliver(TOKEN, sent.update);
    expect(again.status).toBe(200);
    await new Promise((r) => setTimeout(r, 500));
    expect((await history(s, session.id)).filter((e) => e.type === 'user.message')).toHaveLength(1);
    expect(repliesTo(5552).filter((m) => m.text === 'Hello Ada, how can I help?')).toHaveLength(1);
  });

  it('a reply Telegram refuses with its flood limit is posted once after retry_after; one left half posted by a stopped process is posted again', async () => {
    const { session } = await connectedChat(5560);
    tg.floodNext(1, 1);
    fake.enqueue({ kind: 'text', text: 'After the flood.' });
    await tg.userMessage(TOKEN, { chatId: 5560, text: 'hello?' });
    // The reply's row is written after the webhook was acknowledged: absent at first.
    const reply = async () => prisma.channelReply.findFirstOrThrow({ where: { sessionId: session.id } });
    await waitFor(async () => (await prisma.channelReply.findFirst({ where: { sessionId: session.id } }))?.status === 'posted', 20_000, 'the reply posted');
    const tries = () => repliesTo(5560).filter((m) => m.text === 'After the flood.');
    expect(tries()).toHaveLength(2); // the refused try, then the one Telegram took
    const [refusedAt, postedAt] = tg.calls.filter((c) => c.method === 'sendMessage' && c.body.text === 'After the flood.').map((c) => c.at);
    expect(postedAt! - refusedAt!).toBeGreaterThanOrEqual(950); // it waited the second Telegram asked for

    // The process posting it stopped mid-post: the row stays `posting`; once its lease is out,
    // another process (here: the sweep called at once) posts it again.
    const row = await reply();
    await prisma.$executeRaw`UPDATE "ChannelReply" SET "status" = 'posting', "updatedAt" = now() - interval '10 minutes' WHERE "id" = ${row.id}`;
    expect(await requeueStalledReplies()).toEqual([row.id]);
    await waitFor(async () => (await reply()).status === 'posted' && tries().length === 3, 20_000, 'posted again');
    expect(await requeueStalledReplies()).toEqual([]);
  });

  it('a wrong or missing secret token answers 401 invalid_token and records nothing', async () => {
    const { session } = await connectedChat(5553);
    const before = await prisma.channelInbound.count();
    const update = {
      update_id: 9_000_001,
      message: { message_id: 1, from: { id: 5553, is_bot: false, first_name: 'Eve' }, chat: { id: 5553, type: 'private' }, date: 1, text: 'let me in' },
    };
    for (const secret of ['wrong-secret', null]) {
      const res = await tg.deliver(TOKEN, update, secret);
      expect(res.status).toBe(401);
      expect(JSON.parse(res.text)).toEqual({ error: { code: 'invalid_token', message: expect.any(String) } });
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(await prisma.channelInbound.count()).toBe(before);
    expect((await history(s, session.id)).filter((e) => e.type === 'user.message')).toHaveLength(0);
    const unknown = await s.fetch(`${s.base}/channels/inbound/chapp_01jz0000000000000000000000`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(unknown.status).toBe(404);
  });

  it('a photo is downloaded through getFile, becomes a session file, and the model sees it', async () => {
    const { session } = await connectedChat(5554);
    const bytes = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.from('a tiny jpeg body')]);
    const fileId = tg.addFile(bytes);
    fake.enqueue({ kind: 'text', text: 'Nice picture!' });
    await tg.userMessage(TOKEN, { chatId: 5554, photo: fileId, caption: 'look at this' });
    await waitFor(async () => repliesTo(5554).some((m) => m.text === 'Nice picture!'), 15_000, 'reply');
    const files = (await s.api('GET', `/files?scope_id=${session.id}`)).body.data;
    expect(files).toEqual([expect.objectContaining({ mime_type: 'image/jpeg', size_bytes: bytes.length, downloadable: true })]);
    const content = (await history(s, session.id)).find((e) => e.type === 'user.message').content;
    expect(content).toEqual([
      { type: 'text', text: 'look at this' },
      { type: 'image', source: { type: 'file', file_id: files[0].id } },
    ]);
    const downloaded = await s.fetch(`${s.base}/files/${files[0].id}/content`, { headers: { authorization: `Bearer ${s.adminToken}` } });
    expect(Buffer.from(await downloaded.arrayBuffer()).equals(bytes)).toBe(true);
    expect(fake.requests.at(-1)!.body.messages.at(-1).content).toMatchObject([
      { type: 'text', text: 'look at this' },
      { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: bytes.toString('base64') } },
    ]);
  });

  it('a file Telegram cannot hand over is never forwarded half: the end user is asked to send again', async () => {
    const { session } = await connectedChat(5555);
    await tg.userMessage(TOKEN, {
      chatId: 5555,
      text: 'and this',
      document: { fileId: 'missing-file', name: 'report.pdf', mime: 'application/pdf', size: 1000 },
    });
    await waitFor(async () => repliesTo(5555).some((m) => /send it again/.test(m.text)), 10_000, 'guidance');
    expect(repliesTo(5555).find((m) => /send it again/.test(m.text))!.text).toContain('report.pdf');
    expect((await history(s, session.id)).filter((e) => e.type === 'user.message')).toHaveLength(0);
  });

  it('a proactive delivery Telegram refuses emits delivery.failed; a refused post answers invalid_spec', async () => {
    const { session, conn } = await connectedChat(5557);
    const ok = await s.api('POST', `/channels/connections/${conn.id}/deliveries`, {
      body: { destination: { session: session.id }, parts: [{ type: 'text', text: 'Your order shipped.' }] },
    });
    expect(ok.body).toMatchObject({ connection_id: conn.id, thread_id: '5557', status: 'queued' });
    await waitFor(async () => repliesTo(5557).some((m) => m.text === 'Your order shipped.'), 5000, 'proactive post');
    tg.blockedChats.add(5557);
    const refused = await s.api('POST', `/channels/connections/${conn.id}/deliveries`, {
      body: { destination: { session: session.id }, parts: [{ type: 'text', text: 'Are you still there?' }] },
    });
    expect(refused.status).toBe(202);
    await waitFor(async () => (await prisma.channelEvent.count({ where: { type: 'delivery.failed' } })) > 0, 5000, 'delivery.failed');
    const failed = (await prisma.channelEvent.findFirstOrThrow({ where: { type: 'delivery.failed' } })).payload as any;
    expect(failed.data).toMatchObject({
      delivery_id: refused.body.id,
      connection_id: conn.id,
      thread_id: '5557',
      error: { message: expect.stringContaining('blocked') },
    });
    const post = await s.api('POST', `/channels/connections/${conn.id}/threads/5557/messages`, { body: { parts: [{ type: 'text', text: 'hello?' }] } });
    expectError(post, 422, 'invalid_spec');
    expect(post.body.error.message).toContain('bot was blocked by the user');
  });

  it('blocking the bot (my_chat_member kicked) disconnects the connection with channel.disconnected', async () => {
    const { conn } = await connectedChat(5556);
    const res = await tg.deliver(TOKEN, {
      update_id: 9_100_000,
      my_chat_member: {
        chat: { id: 5556, type: 'private' },
        from: { id: 5556, is_bot: false, first_name: 'Ada' },
        date: 1,
        old_chat_member: { status: 'member', user: { id: 1, is_bot: true, first_name: 'bot' } },
        new_chat_member: { status: 'kicked', user: { id: 1, is_bot: true, first_name: 'bot' }, until_date: 0 },
      },
    });
    expect(res.status).toBe(200);
    expect((await s.api('GET', `/channels/connections/${conn.id}`)).body.status).toBe('DISCONNECTED');
    const events = await prisma.channelEvent.findMany({ where: { type: 'channel.disconnected' } });
    expect(events.map((e) => (e.payload as any).data.connection_id)).toContain(conn.id);
  });
});
