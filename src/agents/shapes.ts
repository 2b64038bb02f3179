// Public views of an agent's stored JSON lists. Each view copies only the documented fields, so
// anything else a row may carry (sealed runtime authentication of remote tool servers, fields of
// older rows) never reaches a client.
import type { CustomDataView, InstructionView, McpServerView, SkillAttachmentView } from './contract.js';

type Row = Record<string, unknown>;
const rows = (value: unknown): Row[] => (Array.isArray(value) ? value.filter((v): v is Row => !!v && typeof v === 'object') : []);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);

export function mcpServersView(value: unknown): McpServerView[] {
  return rows(value).map((m) => {
    const tools = (m.tools ?? {}) as Row;
    return { type: 'url', name: str(m.name) ?? '', url: str(m.url) ?? '', tools: { include: strings(tools.include), exclude: strings(tools.exclude) } };
  });
}

export function skillsView(value: unknown): SkillAttachmentView[] {
  return rows(value).map((s) =>
    s.type === 'github'
      ? { type: 'github', url: str(s.url) ?? '', ref: str(s.ref), tokenSecretRef: str(s.tokenSecretRef) }
      : { type: 'skill', skillId: str(s.skillId) ?? '', version: str(s.version) ?? 'latest' },
  );
}

const KINDS = new Set(['spreadsheet', 'doc', 'private_api', 'other']);
export function customDataView(value: unknown): CustomDataView[] {
  return rows(value).map((d) => {
    const config: Record<string, string> = {};
    for (const [k, v] of Object.entries((d.config ?? {}) as Row)) if (typeof v === 'string') config[k] = v;
    return {
      id: str(d.id) ?? '',
      name: str(d.name) ?? '',
      kind: (KINDS.has(String(d.kind)) ? d.kind : 'other') as CustomDataView['kind'],
      scope: d.scope === 'user' ? 'user' : 'creator',
      description: str(d.description),
      uri: str(d.uri),
      config,
    };
  });
}

export function instructionsView(value: unknown): InstructionView[] {
  return rows(value).map((i) => ({ name: str(i.name) ?? '', content: str(i.content) ?? '' }));
}

export function metadataView(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
