// The gateway's metering wrapper: picks the credential, streams the provider, and records the
// usage of every call (priced by the billing rules).
import { prisma } from '../db/client.js';
import { newId } from '../ids.js';
import { streamModel } from './gateway.js';
import { platformCredential } from './credentials.js';
import type { ModelEvent, ModelRequest, Usage } from './types.js';
import { logger } from '../logger.js';

export interface MeterScope {
  sessionId: string;
  universeId: string;
  turn: number;
}

export async function* meteredModelStream(scope: MeterScope, req: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent> {
  const cred = platformCredential(req.provider);
  let usage: Usage | null = null;
  try {
    for await (const ev of streamModel(req, cred, signal)) {
      if (ev.type === 'usage') usage = mergeUsage(usage, ev.usage);
      yield ev;
    }
  } finally {
    if (usage) {
      await prisma.modelUsage.create({
        data: {
          id: newId('msg').replace('msg_', 'use_'),
          sessionId: scope.sessionId,
          universeId: scope.universeId,
          turn: scope.turn,
          provider: req.provider,
          model: req.model,
          billing: cred.kind,
          inputTokens: usage.inputTokens,
          outputTokens: usage.outputTokens,
          cacheReadTokens: usage.cacheReadTokens,
          cacheWriteTokens: usage.cacheWriteTokens,
        },
      }).catch((err) => logger.warn({ err }, 'could not record model usage'));
    }
  }
}

/** Usage events are cumulative per call: keep the largest value seen of each counter. */
function mergeUsage(a: Usage | null, b: Usage): Usage {
  if (!a) return { ...b };
  return {
    inputTokens: Math.max(a.inputTokens, b.inputTokens),
    outputTokens: Math.max(a.outputTokens, b.outputTokens),
    cacheReadTokens: Math.max(a.cacheReadTokens, b.cacheReadTokens),
    cacheWriteTokens: Math.max(a.cacheWriteTokens, b.cacheWriteTokens),
  };
}
