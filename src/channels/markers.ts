// Working markers ("typing…", a reaction, a deferred "thinking…"): shown when a message is
// routed, repeated where the platform lets them fade, and cleared when the reply is posted (or
// a post says `done`). Kept per thread in this process; they are a courtesy, never state.
import { settings } from '../config.js';
import { logger } from '../logger.js';
import type { Outbound, OutboundTarget, Surface } from './platforms/types.js';

const MAX_MARKER_MS = settings.channelMarkerMaxMs();

interface Marker {
  surface: Surface;
  outbound: Outbound;
  target: OutboundTarget;
  timer: NodeJS.Timeout | null;
  stopAt: number;
}

const markers = new Map<string, Marker>();
const keyOf = (connectionId: string, threadId: string) => `${connectionId}\u0000${threadId}`;

const quietly = (what: string, p: Promise<void>) => p.catch((err) => logger.debug({ err: (err as Error).message }, `working marker: ${what} failed`));

export function openMarker(surface: Surface, outbound: Outbound, target: OutboundTarget): void {
  if (!outbound.capabilities.markers) return;
  const key = keyOf(surface.connectionId, target.threadId);
  const existing = markers.get(key);
  if (existing) {
    // A newer message in the same thread takes the marker over.
    if (existing.target.replyTo && existing.target.replyTo !== target.replyTo) void quietly('clear', outbound.clearWorking(surface, existing.target));
    existing.target = target;
    existing.stopAt = Date.now() + MAX_MARKER_MS;
  } else {
    const marker: Marker = { surface, outbound, target, timer: null, stopAt: Date.now() + MAX_MARKER_MS };
    if (outbound.markerRefreshMs) {
      marker.timer = setInterval(() => {
        if (Date.now() > marker.stopAt) return void closeMarker(surface.connectionId, marker.target.threadId, false);
        void quietly('refresh', outbound.markWorking(marker.surface, marker.target));
      }, outbound.markerRefreshMs);
      marker.timer.unref();
    }
    markers.set(key, marker);
  }
  void quietly('mark', outbound.markWorking(surface, target));
}

/** The open marker's target of a thread: the message a post replies to, with its context. */
export function markerTarget(connectionId: string, threadId: string): OutboundTarget | null {
  return markers.get(keyOf(connectionId, threadId))?.target ?? null;
}

export async function closeMarker(connectionId: string, threadId: string, clear = true): Promise<void> {
  const key = keyOf(connectionId, threadId);
  const marker = markers.get(key);
  if (!marker) return;
  markers.delete(key);
  if (marker.timer) clearInterval(marker.timer);
  if (clear) await quietly('clear', marker.outbound.clearWorking(marker.surface, marker.target));
}

export function closeAllMarkers(): void {
  for (const marker of markers.values()) if (marker.timer) clearInterval(marker.timer);
  markers.clear();
}
