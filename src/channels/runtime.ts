// The channels' background work in a process: the inbound sweep and the followers of replies
// still owed (resumed after a restart, and taken over from a process that stopped mid-post). Started once the service listens (the listen address is
// the default PUBLIC_URL, a composed service: src/channels/public-url.ts).
import { logger } from '../logger.js';
import { startInboundSweeper } from './inbound.js';
import { requeueStalledReplies, resumePendingReplies, stopReplies } from './replies.js';
import { closeAllMarkers } from './markers.js';

const STALLED_REPLIES_EVERY_MS = 60_000;

export interface ChannelsRuntime {
  stop(): Promise<void>;
}

export function startChannels(): ChannelsRuntime {
  const sweeper = startInboundSweeper();
  void resumePendingReplies()
    .then((n) => n && logger.info({ replies: n }, 'following channel replies still owed'))
    .catch((err) => logger.warn({ err }, 'could not resume channel replies'));
  // Replies another process left half posted (it stopped while posting) are taken over here too.
  const stalled = setInterval(
    () => void requeueStalledReplies().catch((err) => logger.warn({ err }, 'could not requeue stalled channel replies')),
    STALLED_REPLIES_EVERY_MS,
  );
  stalled.unref();
  return {
    async stop() {
      clearInterval(stalled);
      await sweeper.stop();
      stopReplies();
      closeAllMarkers();
    },
  };
}
