// The channels' background work in a process: the inbound sweep and the followers of replies
// still owed (resumed after a restart). Started once the listen address is known (it is the
// default PUBLIC_URL).
import { logger } from '../logger.js';
import { setListenUrl } from './public-url.js';
import { startInboundSweeper } from './inbound.js';
import { resumePendingReplies, stopReplies } from './replies.js';
import { closeAllMarkers } from './markers.js';

export interface ChannelsRuntime {
  stop(): Promise<void>;
}

export function startChannels(listenUrl: string): ChannelsRuntime {
  setListenUrl(listenUrl);
  const sweeper = startInboundSweeper();
  void resumePendingReplies()
    .then((n) => n && logger.info({ replies: n }, 'following channel replies still owed'))
    .catch((err) => logger.warn({ err }, 'could not resume channel replies'));
  return {
    async stop() {
      await sweeper.stop();
      stopReplies();
      closeAllMarkers();
      setListenUrl(null);
    },
  };
}
