// The channels' background work in a process: the inbound sweep and the followers of replies
// still owed (resumed after a restart). Started once the service listens (the listen address is
// the default PUBLIC_URL, a composed service: src/channels/public-url.ts).
import { logger } from '../logger.js';
import { startInboundSweeper } from './inbound.js';
import { resumePendingReplies, stopReplies } from './replies.js';
import { closeAllMarkers } from './markers.js';

export interface ChannelsRuntime {
  stop(): Promise<void>;
}

export function startChannels(): ChannelsRuntime {
  const sweeper = startInboundSweeper();
  void resumePendingReplies()
    .then((n) => n && logger.info({ replies: n }, 'following channel replies still owed'))
    .catch((err) => logger.warn({ err }, 'could not resume channel replies'));
  return {
    async stop() {
      await sweeper.stop();
      stopReplies();
      closeAllMarkers();
    },
  };
}
