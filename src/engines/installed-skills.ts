// The skills provisioning placed in a session's sandbox, as the session row records them
// (src/skills/materialize.ts writes them): what the engines name in the system prompt.
import { prisma } from '../db/client.js';

export type InstalledSkill = { name: string; description: string; path: string };

/** The session's installed skills, read from its row. */
export async function installedSkills(sessionId: string): Promise<InstalledSkill[]> {
  return installedSkillsOf(await prisma.session.findUnique({ where: { id: sessionId }, select: { installedSkills: true } }));
}

/** The same, from a session row already read. */
export function installedSkillsOf(session: { installedSkills: unknown } | null): InstalledSkill[] {
  return (session?.installedSkills ?? []) as InstalledSkill[];
}
