// The one interface every messaging platform implements: registration, inbound verification and
// parsing into normalised messages, posting, working markers and file downloads.
import type { AppPlatform, Capabilities } from '../contract.js';

/** An app as adapters see it: opened credentials and what registration learned. */
export interface AppRecord {
  id: string;
  universeId: string;
  platform: AppPlatform;
  credentials: Record<string, string>;
  /** The value the platform echoes back (telegram secret_token, whatsapp verify_token). */
  inboundSecret: string;
  info: Record<string, string>;
}

export interface InboundRequest {
  method: 'GET' | 'POST';
  /** Lower-cased header names. */
  headers: Record<string, string | undefined>;
  query: Record<string, string>;
  rawBody: Buffer;
}

export interface InboundAttachment {
  /** The platform's handle to fetch it (file id, media id or URL). */
  ref: string;
  type: 'image' | 'document' | 'audio' | 'video';
  name: string;
  mimeType: string;
  sizeBytes: number | null;
}

export type InboundKind = 'message' | 'command' | 'action' | 'reaction';

/** One end-user action, normalised. */
export interface InboundMessage {
  kind: InboundKind;
  /** The platform's unique id of this delivery (a retry repeats it): processed once. */
  dedupeId: string;
  /** Which connection it belongs to: telegram chat, slack team, discord application, whatsapp number. */
  surfaceId: string;
  threadId: string;
  messageId: string;
  text: string;
  conversation: { id: string; is_dm: boolean; type: string | null; title: string | null };
  author: { id: string; name: string | null; username: string | null };
  attachments: InboundAttachment[];
  command?: { name: string; text: string };
  action?: { id: string; value: string | null };
  reaction?: { emoji: string; message_id: string; removed: boolean };
  /** Platform context a reply needs (discord interaction token, slack response_url). */
  context?: Record<string, string>;
}

/** The platform says a surface went away or needs re-authorisation. */
export interface SurfaceNotice {
  kind: 'disconnected' | 'needs_reauth';
  /** null: every connection of the app. */
  surfaceId: string | null;
  reason: string;
}

export interface InboundResult {
  /** The HTTP answer the platform expects (a challenge, a PONG, an ack). */
  status: number;
  body?: string | Record<string, unknown>;
  messages: InboundMessage[];
  notices: SurfaceNotice[];
}

export interface OutboundTarget {
  threadId: string;
  replyTo?: string | null;
  context?: Record<string, string>;
}

export interface OutboundMessage {
  text: string;
  /** The text is markdown (send it formatted where the platform can). */
  markdown: boolean;
  /** A platform-native payload merged into the platform's send call. */
  raw?: Record<string, unknown>;
  displayName?: string | null;
}

/** Where a post goes: the app (null for loopback) and the connection. */
export interface Surface {
  app: AppRecord | null;
  connectionId: string;
  channelId: string | null;
}

export interface Outbound {
  capabilities: Capabilities;
  /** Longest text one platform message may carry (longer texts are split). */
  maxTextLength: number;
  send(surface: Surface, target: OutboundTarget, message: OutboundMessage): Promise<{ messageId: string | null }>;
  markWorking(surface: Surface, target: OutboundTarget): Promise<void>;
  clearWorking(surface: Surface, target: OutboundTarget): Promise<void>;
  /** How often a working marker must be repeated while work goes on (null: it stays). */
  markerRefreshMs: number | null;
}

export type ConnectFlow = 'link' | 'start' | 'code';

export interface RegisterContext {
  inboundUrl: string;
  inboundSecret: string;
}

export interface PlatformAdapter extends Outbound {
  platform: AppPlatform;
  /** Most bytes of inbound files per message. */
  maxInboundBytes: number;
  connectFlow: ConnectFlow;
  /** Calls the platform: proves the credentials and points its webhook at us where it can. */
  register(credentials: Record<string, string>, ctx: RegisterContext): Promise<{ info: Record<string, string>; setup: Record<string, string> }>;
  /** Best effort on app delete. */
  unregister?(app: AppRecord): Promise<void>;
  verify(app: AppRecord, req: InboundRequest): boolean;
  parse(app: AppRecord, req: InboundRequest): InboundResult;
  /** Acknowledges what the platform shows as pending (a button's spinner). */
  acknowledge?(app: AppRecord, message: InboundMessage): Promise<void>;
  download(app: AppRecord, attachment: InboundAttachment, maxBytes: number): Promise<{ data: Buffer; mimeType: string; name: string }>;
  /** The connect link (and code) of start and code flows; link flows use the hosted page. */
  connectInfo?(app: AppRecord, token: string, code: string): { url: string; phone?: string; code?: string };
  /** Sends a platform user the connect link (slack invite_user). */
  invite?(app: AppRecord, user: string, url: string, label: string): Promise<void>;
  /** The surface a link-flow claim connects (slack team, discord application). */
  linkSurface?(app: AppRecord): string;
  /** A proactive post's thread when the connection has seen no message yet. */
  homeThread?(channelId: string): string | null;
}

/** The platform refused or failed a call. */
export class PlatformError extends Error {
  constructor(
    readonly platform: string,
    message: string,
    readonly status: number | null = null,
    /** The credentials were refused (401/403, invalid_auth…). */
    readonly unauthorized = false,
    /** `unreachable`: no answer came (network, timeout); `retryAfterMs`: the platform said when to try again. */
    readonly detail: { unreachable?: boolean; retryAfterMs?: number } = {},
  ) {
    super(message);
  }

  /** Worth trying again later: no answer, rate limited, or the platform's own failure. */
  get transient(): boolean {
    if (this.unauthorized) return false;
    return !!this.detail.unreachable || this.status === 429 || (this.status !== null && this.status >= 500);
  }
}
