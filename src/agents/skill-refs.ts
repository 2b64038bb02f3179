// Skill attachments must name skills of the agent's own universe, and a pinned revision must
// belong to its skill: otherwise the agent would silently run without them. 422 invalid_spec
// (a domain rule, like a model the engine does not run). GitHub attachments are checked at clone.
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';

type Attachment = { type: 'skill'; skillId: string; version: string } | { type: 'github' };

export async function checkSkillRefs(universeId: string, skills: readonly Attachment[]): Promise<void> {
  const refs = skills.filter((s): s is Extract<Attachment, { type: 'skill' }> => s.type === 'skill');
  if (!refs.length) return;
  const ids = [...new Set(refs.map((s) => s.skillId))];
  const found = await prisma.skill.findMany({ where: { id: { in: ids }, universeId }, select: { id: true } });
  const known = new Set(found.map((s) => s.id));
  const missing = ids.filter((id) => !known.has(id));
  if (missing.length) throw new AppError('invalid_spec', `unknown skill${missing.length > 1 ? 's' : ''} ${missing.join(', ')} in this universe`);
  const pinned = refs.filter((s) => s.version !== 'latest');
  if (!pinned.length) return;
  const revisions = await prisma.skillRevision.findMany({ where: { id: { in: pinned.map((s) => s.version) } }, select: { id: true, skillId: true } });
  const owner = new Map(revisions.map((r) => [r.id, r.skillId]));
  const wrong = pinned.filter((s) => owner.get(s.version) !== s.skillId);
  if (wrong.length) throw new AppError('invalid_spec', `revision ${wrong[0]!.version} is not a revision of skill ${wrong[0]!.skillId}`);
}
