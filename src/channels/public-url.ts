// The origin platforms and connect links are given: PUBLIC_URL, else the address this process
// listens on (a composed service: known once the server is up), else HOST:PORT.
import { config } from '../config.js';
import { service } from '../services/registry.js';

declare module '../services/registry.js' {
  interface Services {
    /** The address the HTTP server listens on, null before it does and after it closed. */
    listenUrl: () => string | null;
  }
}

export function publicUrl(): string {
  const cfg = config();
  return cfg.publicUrl ?? service('listenUrl')() ?? `http://${cfg.host}:${cfg.port}`;
}

export const inboundUrl = (appId: string) => `${publicUrl()}/v1/channels/inbound/${appId}`;
export const connectPageUrl = (token: string) => `${publicUrl()}/v1/connect/${token}`;
