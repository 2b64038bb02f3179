// The loopback platform: a real surface inside the service. What the service posts is written
// to the connection's outbox (GET …/loopback/outbox); end-user messages are played with
// POST …/loopback/inbound. Lets a developer without any platform account use channels.
import { prisma } from '../../db/client.js';
import { channelId } from '../ids.js';
import type { ChannelMessagePart } from '../contract.js';
import type { Outbound, OutboundMessage } from './types.js';

function partsOf(message: OutboundMessage): ChannelMessagePart[] {
  if (message.raw) return [{ type: 'raw', platform: 'loopback', payload: JSON.stringify(message.raw) }];
  return [{ type: message.markdown ? 'markdown' : 'text', text: message.text }];
}

export const loopback: Outbound = {
  capabilities: { threads: true, reactions: false, markers: true, proactive: true, markdown: true, modals: false, ephemeral: false, streaming: false },
  maxTextLength: 40_000,
  markerRefreshMs: null,

  async send(surface, target, message) {
    const id = channelId('lbmsg');
    await prisma.loopbackMessage.create({
      data: {
        id,
        connectionId: surface.connectionId,
        threadId: target.threadId,
        kind: 'message',
        body: { text: message.text, parts: partsOf(message), display_name: message.displayName ?? null, reply_to: target.replyTo ?? null },
      },
    });
    return { messageId: id };
  },

  async markWorking(surface, target) {
    await prisma.loopbackMessage.create({
      data: {
        id: channelId('lbmsg'),
        connectionId: surface.connectionId,
        threadId: target.threadId,
        kind: 'typing',
        body: { reply_to: target.replyTo ?? null },
      },
    });
  },

  async clearWorking(surface, target) {
    await prisma.loopbackMessage.create({
      data: {
        id: channelId('lbmsg'),
        connectionId: surface.connectionId,
        threadId: target.threadId,
        kind: 'typing_done',
        body: { reply_to: target.replyTo ?? null },
      },
    });
  },
};
