// The origin platforms and connect links are given: PUBLIC_URL, else the address this process
// listens on (known once the server is up).
import { config } from '../config.js';

let listening: string | null = null;
export function setListenUrl(url: string | null): void {
  listening = url;
}

export function publicUrl(): string {
  const cfg = config();
  return cfg.publicUrl ?? listening ?? `http://${cfg.host}:${cfg.port}`;
}

export const inboundUrl = (appId: string) => `${publicUrl()}/v1/channels/inbound/${appId}`;
export const connectPageUrl = (token: string) => `${publicUrl()}/v1/connect/${token}`;
