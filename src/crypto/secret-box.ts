// Encryption at rest for write-only secrets: AES-256-GCM under SECRET_KEY (32 bytes, hex or
// base64). Without SECRET_KEY a key is generated once into DATA_DIR and reused. The key is a
// composed part (`secretKey`, loaded by startServer with loadSecretKey).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { service } from '../services/registry.js';

declare module '../services/registry.js' {
  interface Services {
    secretKey: Buffer;
  }
}

function parseKey(raw: string): Buffer {
  const trimmed = raw.trim();
  const buf = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (buf.length !== 32) throw new Error('SECRET_KEY must be 32 bytes, as 64 hex characters or base64');
  return buf;
}

/** SECRET_KEY, or the key file in DATA_DIR (created on first start; another process's if it won the race). */
export function loadSecretKey(secretKey: string | undefined, dataDir: string): Buffer {
  if (secretKey) return parseKey(secretKey);
  const file = path.join(dataDir, 'secret.key');
  if (fs.existsSync(file)) return parseKey(fs.readFileSync(file, 'utf8'));
  fs.mkdirSync(dataDir, { recursive: true });
  const fresh = randomBytes(32);
  try {
    fs.writeFileSync(file, fresh.toString('hex'), { mode: 0o600, flag: 'wx' });
    return fresh;
  } catch (err) {
    // Another process created it first: use theirs.
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return parseKey(fs.readFileSync(file, 'utf8'));
  }
}

const currentKey = (): Buffer => service('secretKey');

/** Returns `v1.<iv>.<tag>.<ciphertext>` in base64url. */
export function seal(plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', currentKey(), iv);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
}

export function open(sealed: string): string {
  const [version, iv, tag, body] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('unknown secret format');
  const decipher = createDecipheriv('aes-256-gcm', currentKey(), Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
}
