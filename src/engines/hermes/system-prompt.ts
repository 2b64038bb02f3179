// The system prompt of a hermes turn: the engine's own short preamble, the agent's prompt
// (the version active when the session started), then the agent's and session's instruction files.
interface InstructionFile { name: string; content: string }

const PREAMBLE = `You are an agent running in a sandbox. Your working directory is /workspace; use the tools
bash, read_file, write_file and edit_file to act there. Be concise and finish the user's request.`;

export function systemPromptFor(input: {
  agentPrompt: string | null;
  agentInstructions: InstructionFile[];
  sessionInstructions: InstructionFile[];
}): string {
  const parts = [PREAMBLE];
  if (input.agentPrompt) parts.push(input.agentPrompt);
  for (const f of [...input.agentInstructions, ...input.sessionInstructions]) {
    if (f.content) parts.push(`<instructions file="${f.name}">\n${f.content}\n</instructions>`);
  }
  return parts.join('\n\n');
}
