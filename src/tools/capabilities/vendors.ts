// The platform's vendor accounts: base URL and key of each vendor, read from the environment at
// call time (an operator can add a key without a restart). Every request goes through the
// outbound guard. Documented in docs/tools.md (variables table).
import { environment } from '../../config.js';
import type { FormData } from 'undici';
import { guardedFetch, outboundErrorMessage } from '../../net/outbound-guard.js';

export interface VendorDef {
  label: string;
  /** Variables that must all be set; the key is their values joined by `:` (DataForSEO's login:password). */
  keyVars: string[];
  /** Variables that may hold the key instead (the first set one wins), e.g. OPENAI_API_KEY for images. */
  fallbackKeyVars?: string[];
  baseVar: string;
  fallbackBaseVar?: string;
  defaultBase: string | null;
}

export const VENDORS = {
  exa: { label: 'Exa', keyVars: ['EXA_API_KEY'], baseVar: 'EXA_BASE_URL', defaultBase: 'https://api.exa.ai' },
  'tinyfish-fetch': { label: 'TinyFish', keyVars: ['TINYFISH_API_KEY'], baseVar: 'TINYFISH_FETCH_BASE_URL', defaultBase: 'https://api.fetch.tinyfish.ai' },
  'tinyfish-agent': { label: 'TinyFish', keyVars: ['TINYFISH_API_KEY'], baseVar: 'TINYFISH_AGENT_BASE_URL', defaultBase: 'https://agent.tinyfish.ai' },
  dataforseo: {
    label: 'DataForSEO',
    keyVars: ['DATAFORSEO_LOGIN', 'DATAFORSEO_PASSWORD'],
    baseVar: 'DATAFORSEO_BASE_URL',
    defaultBase: 'https://api.dataforseo.com',
  },
  openai: {
    label: 'OpenAI images',
    keyVars: ['GPTIMAGE_API_KEY'],
    fallbackKeyVars: ['OPENAI_API_KEY'],
    baseVar: 'GPTIMAGE_BASE_URL',
    fallbackBaseVar: 'OPENAI_BASE_URL',
    defaultBase: 'https://api.openai.com/v1',
  },
  rembg: { label: 'rembg', keyVars: ['REMBG_BASE_URL'], baseVar: 'REMBG_BASE_URL', defaultBase: null },
  seedance: {
    label: 'Seedance (BytePlus ModelArk)',
    keyVars: ['SEEDANCE_API_KEY'],
    baseVar: 'SEEDANCE_BASE_URL',
    defaultBase: 'https://ark.ap-southeast.bytepluses.com/api/v3',
  },
  minimax: { label: 'MiniMax', keyVars: ['MINIMAX_API_KEY'], baseVar: 'MINIMAX_BASE_URL', defaultBase: 'https://api.minimax.io/v1' },
  'fish-audio': { label: 'Fish Audio', keyVars: ['FISH_AUDIO_API_KEY'], baseVar: 'FISH_AUDIO_BASE_URL', defaultBase: 'https://api.fish.audio' },
} satisfies Record<string, VendorDef>;
export type VendorName = keyof typeof VENDORS;

export interface VendorAccess {
  baseUrl: string;
  key: string;
}

/** The vendor's base URL and key, or the sentence saying which variable is missing. */
export function vendorAccess(name: VendorName): VendorAccess | { missing: string } {
  const v: VendorDef = VENDORS[name];
  const env = environment();
  let key = v.keyVars.every((k) => env[k]) ? v.keyVars.map((k) => env[k]!).join(':') : '';
  if (!key) key = (v.fallbackKeyVars ?? []).map((k) => env[k]).find(Boolean) ?? '';
  if (!key) {
    const names = [v.keyVars.join(' and '), ...(v.fallbackKeyVars ?? [])].join(' or ');
    return { missing: `the service has no ${v.label} credentials: the operator must set ${names}` };
  }
  const base = env[v.baseVar] || (v.fallbackBaseVar ? env[v.fallbackBaseVar] : undefined) || v.defaultBase;
  if (!base) return { missing: `the service has no ${v.label} address: the operator must set ${v.baseVar}` };
  return { baseUrl: base.replace(/\/+$/, ''), key };
}

/** A vendor's refusal or failure, in words the model (and the client) can read. */
export class VendorError extends Error {
  constructor(
    message: string,
    readonly status: number | null = null,
  ) {
    super(message);
    this.name = 'VendorError';
  }
}

const redact = (text: string, key: string) => (key ? text.split(key).join('***') : text);

/** The message a vendor put in its error body, whatever its shape. */
function vendorMessage(body: unknown): string | null {
  if (typeof body === 'string') return body.slice(0, 500) || null;
  if (!body || typeof body !== 'object') return null;
  const b = body as Record<string, unknown>;
  const nested = b.error && typeof b.error === 'object' ? (b.error as Record<string, unknown>) : null;
  const candidates = [nested?.message, b.error, b.message, b.status_message, (b.base_resp as Record<string, unknown> | undefined)?.status_msg, b.detail];
  const found = candidates.find((c) => typeof c === 'string' && c);
  return found ? String(found).slice(0, 500) : null;
}

export interface VendorRequest {
  method?: string;
  headers?: Record<string, string>;
  /** JSON text, or multipart (undici's FormData: the guarded fetch is undici's). */
  body?: string | FormData;
  signal: AbortSignal;
  timeoutMs: number;
  /** Largest answer read (bytes). */
  maxBytes?: number;
}

async function send(label: string, key: string, url: string, req: VendorRequest) {
  const signal = AbortSignal.any([req.signal, AbortSignal.timeout(req.timeoutMs)]);
  try {
    return await guardedFetch(url, { method: req.method ?? 'GET', headers: req.headers, body: req.body, signal });
  } catch (err) {
    if (req.signal.aborted) throw new VendorError('interrupted');
    throw new VendorError(`${label} could not be reached: ${redact(outboundErrorMessage(err), key)}`);
  }
}

async function readCapped(res: Awaited<ReturnType<typeof guardedFetch>>, maxBytes: number, label: string): Promise<Buffer> {
  const length = Number(res.headers.get('content-length') ?? 0);
  if (length > maxBytes) throw new VendorError(`${label} answered ${length} bytes, over the ${maxBytes}-byte limit`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body ?? []) {
    size += (chunk as Uint8Array).byteLength;
    if (size > maxBytes) throw new VendorError(`${label}'s answer exceeded ${maxBytes} bytes`);
    chunks.push(Buffer.from(chunk as Uint8Array));
  }
  return Buffer.concat(chunks);
}

/** A JSON call to a vendor; a non-2xx answer becomes a VendorError carrying the vendor's message. */
export async function vendorJson<T>(label: string, access: VendorAccess, url: string, req: VendorRequest): Promise<T> {
  const res = await send(label, access.key, url, req);
  const raw = await readCapped(res, req.maxBytes ?? 32 * 1024 * 1024, label);
  let body: unknown = raw.toString('utf8');
  try {
    body = JSON.parse(body as string);
  } catch {
    /* not JSON: keep the text */
  }
  if (!res.ok) {
    const said = vendorMessage(body);
    throw new VendorError(`${label} refused the request (HTTP ${res.status})${said ? `: ${redact(said, access.key)}` : ''}`, res.status);
  }
  if (typeof body !== 'object' || body === null) throw new VendorError(`${label} answered something other than JSON`);
  return body as T;
}

/** Bytes from a URL a vendor handed back (a generated video), capped. */
export async function vendorDownload(label: string, url: string, req: VendorRequest): Promise<{ data: Buffer; mimeType: string }> {
  const res = await send(label, '', url, req);
  if (!res.ok) throw new VendorError(`${label}'s file could not be downloaded (HTTP ${res.status})`);
  const data = await readCapped(res, req.maxBytes ?? 32 * 1024 * 1024, label);
  return { data, mimeType: (res.headers.get('content-type') ?? 'application/octet-stream').split(';')[0]!.trim() };
}

/** Raw bytes from a vendor (rembg answers the image itself). */
export async function vendorBytes(label: string, access: VendorAccess, url: string, req: VendorRequest): Promise<{ data: Buffer; mimeType: string }> {
  const res = await send(label, access.key, url, req);
  const data = await readCapped(res, req.maxBytes ?? 32 * 1024 * 1024, label);
  if (!res.ok) {
    let said: string | null = null;
    try {
      said = vendorMessage(JSON.parse(data.toString('utf8')));
    } catch {
      said = data.toString('utf8').slice(0, 300) || null;
    }
    throw new VendorError(`${label} refused the request (HTTP ${res.status})${said ? `: ${redact(said, access.key)}` : ''}`, res.status);
  }
  return { data, mimeType: (res.headers.get('content-type') ?? 'application/octet-stream').split(';')[0]!.trim() };
}
