// The system prompt of a hermes turn: the engine's own short preamble, the agent's prompt
// (the version active when the session started), then the agent's and session's instruction files.
import { memoryPromptSection, type MemoryMountNote } from '../memory-prompt.js';

interface InstructionFile {
  name: string;
  content: string;
}

const PREAMBLE = `You are an agent running in a sandbox. Your working directory is /workspace; use the tools
bash, read_file, write_file and edit_file to act there. Be concise and finish the user's request.`;

export function systemPromptFor(input: {
  agentPrompt: string | null;
  agentInstructions: InstructionFile[];
  sessionInstructions: InstructionFile[];
  skills?: { name: string; description: string; path: string }[];
  customData?: { name: string; kind: string; description?: string | null; uri?: string | null }[];
  memoryStores?: MemoryMountNote[];
}): string {
  const parts = [PREAMBLE];
  if (input.agentPrompt) parts.push(input.agentPrompt);
  for (const f of [...input.agentInstructions, ...input.sessionInstructions]) {
    if (f.content) parts.push(`<instructions file="${f.name}">\n${f.content}\n</instructions>`);
  }
  if (input.skills?.length) {
    // Skills are folders in the sandbox; the model reads SKILL.md when one fits the task.
    parts.push(['<skills>', ...input.skills.map((s) => `- ${s.name}: ${s.description} (read ${s.path}/SKILL.md)`), '</skills>'].join('\n'));
  }
  if (input.customData?.length) {
    parts.push(
      [
        '<custom-data>',
        ...input.customData.map((d) => `- ${d.name} (${d.kind})${d.description ? `: ${d.description}` : ''}${d.uri ? ` at ${d.uri}` : ''}`),
        '</custom-data>',
      ].join('\n'),
    );
  }
  const memory = memoryPromptSection(input.memoryStores);
  if (memory) parts.push(memory);
  return parts.join('\n\n');
}
