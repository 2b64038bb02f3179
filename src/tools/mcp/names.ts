// The names remote tools are offered to the model under: `mcp__<server>__<tool>`, limited to
// what both providers accept (letters, digits, `_` and `-`, at most 64 characters). A name that
// had to be shortened, or that two tools would share, gets a short hash of its origin.
import { createHash } from 'node:crypto';

const MAX = 64;
const clean = (s: string) => s.replace(/[^A-Za-z0-9_-]/g, '_');
const hash = (server: string, tool: string) => createHash('sha256').update(`${server}\0${tool}`).digest('hex').slice(0, 8);

export function mcpToolName(server: string, tool: string, taken: Set<string>): string {
  const plain = `mcp__${clean(server)}__${clean(tool)}`;
  if (plain.length <= MAX && !taken.has(plain)) return plain;
  const suffix = `_${hash(server, tool)}`;
  return `${plain.slice(0, MAX - suffix.length)}${suffix}`;
}
