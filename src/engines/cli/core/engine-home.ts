// Where a CLI engine keeps its per-session state inside the sandbox, and where a session's skills
// go: the folder the session's CLI reads skills from (under that home, kept with the session's
// storage and out of the user's files), or /workspace/.skills for hermes, which lists them in its
// system prompt.
import { engineAdapter } from '../registry.js';

/** The CLI's HOME and state directory inside the sandbox (kept with the session's workspace). */
export const engineHome = (agentType: string) => `/workspace/.agent/${agentType}`;

/** Where skills go for engines that read none by themselves (hermes): listed in the system prompt. */
export const PROMPT_SKILLS_DIR = '/workspace/.skills';

/** The folder a session of this engine gets its skills in (`<folder>/<name>/SKILL.md`). */
export function skillsFolder(agentType: string): { dir: string; readByCli: boolean } {
  const own = engineAdapter(agentType)?.skillsDir(engineHome(agentType)) ?? null;
  return own ? { dir: own, readByCli: true } : { dir: PROMPT_SKILLS_DIR, readByCli: false };
}
