// Skills: universe-scoped bundles with immutable revisions. `latestRevisionId` is what
// `latest` resolves to and repoints when the latest revision is deleted.
import { Readable } from 'node:stream';
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import type { Viewer } from '../auth/viewer.js';
import type { Skill, SkillRevision } from '../generated/prisma/client.js';
import { blobStore } from '../blobs/blob-store.js';
import { readBundle, type BundleFile } from './bundle.js';
import type { SkillBundleBody, SkillRevisionView, SkillView } from './contract.js';

/** One file of a revision: its manifest entry and where its bytes are stored. */
export type ManifestEntry = { path: string; size: number; sha256: string; executable: boolean; blobKey: string };

/** A JSON bundle's files as bytes. */
export function filesFromJson(body: SkillBundleBody): { displayName?: string; files: BundleFile[] } {
  return {
    displayName: body.displayName,
    files: body.files.map((f) => ({ path: f.path, data: Buffer.from(f.content, f.encoding), executable: !!f.executable })),
  };
}

export function skillView(s: Skill): SkillView {
  return {
    id: s.id,
    displayName: s.displayName,
    latestRevisionId: s.latestRevisionId,
    createdAt: s.createdAt.toISOString(),
    updatedAt: s.updatedAt.toISOString(),
  };
}

export function skillRevisionView(r: SkillRevision): SkillRevisionView {
  return {
    id: r.id,
    skillId: r.skillId,
    name: r.name,
    description: r.description,
    // The manifest without where the bytes live.
    files: (r.files as ManifestEntry[]).map(({ path, size, sha256, executable }) => ({ path, size, sha256, executable })),
    createdAt: r.createdAt.toISOString(),
  };
}

async function storeRevision(skillId: string, files: BundleFile[], name: string, description: string) {
  const manifest = [];
  for (const f of files) {
    const blob = await blobStore().put(Readable.from([f.data]));
    manifest.push({ path: f.path, size: blob.size, sha256: blob.sha256, executable: f.executable, blobKey: blob.key });
  }
  manifest.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return prisma.skillRevision.create({ data: { id: newId('skr'), skillId, name, description, files: manifest } });
}

export async function createSkill(viewer: Viewer, input: { displayName?: string; files: BundleFile[] }): Promise<{ skill: Skill; revision: SkillRevision }> {
  const bundle = readBundle(input.files);
  const id = newId('skill');
  await prisma.skill.create({ data: { id, universeId: viewer.universe.id, displayName: input.displayName ?? bundle.name, name: bundle.name } });
  const revision = await storeRevision(id, bundle.files, bundle.name, bundle.description);
  const skill = await prisma.skill.update({ where: { id }, data: { latestRevisionId: revision.id } });
  return { skill, revision };
}

/** A page of the universe's skills (the caller's bounds, order and size): one query. */
export function listSkills(
  viewer: Viewer,
  page: { where: { id?: { lt?: string; gt?: string } }; orderBy: { id: 'asc' | 'desc' }; take: number },
): Promise<Skill[]> {
  return prisma.skill.findMany({ where: { ...page.where, universeId: viewer.universe.id }, orderBy: page.orderBy, take: page.take });
}

export async function findSkill(viewer: Viewer, id: string): Promise<Skill> {
  const skill = await prisma.skill.findFirst({ where: { id, universeId: viewer.universe.id } });
  if (!skill) throw new AppError('not_found', 'skill not found');
  return skill;
}

export async function addRevision(viewer: Viewer, skillId: string, input: { files: BundleFile[] }): Promise<SkillRevision> {
  const skill = await findSkill(viewer, skillId);
  const bundle = readBundle(input.files);
  if (bundle.name !== skill.name)
    throw new AppError('name_mismatch', `SKILL.md name ${JSON.stringify(bundle.name)} differs from the skill's name ${JSON.stringify(skill.name)}`);
  const revision = await storeRevision(skill.id, bundle.files, bundle.name, bundle.description);
  await prisma.skill.update({ where: { id: skill.id }, data: { latestRevisionId: revision.id } });
  return revision;
}

export async function listRevisions(viewer: Viewer, skillId: string): Promise<SkillRevision[]> {
  const skill = await findSkill(viewer, skillId);
  return prisma.skillRevision.findMany({ where: { skillId: skill.id }, orderBy: { id: 'desc' } });
}

export async function findRevision(viewer: Viewer, skillId: string, revisionId: string): Promise<SkillRevision> {
  const skill = await findSkill(viewer, skillId);
  const rev = await prisma.skillRevision.findFirst({ where: { id: revisionId, skillId: skill.id } });
  if (!rev) throw new AppError('not_found', 'revision not found');
  return rev;
}

/** Agents of the universe attaching the skill (any version), or pinning one revision. */
async function agentsUsing(universeId: string, skillId: string, revisionId?: string): Promise<string[]> {
  const agents = await prisma.agent.findMany({ where: { universeId }, select: { id: true, skills: true } });
  return agents
    .filter((a) =>
      (a.skills as { type: string; skillId?: string; version?: string }[]).some(
        (s) => s.type === 'skill' && s.skillId === skillId && (!revisionId || s.version === revisionId),
      ),
    )
    .map((a) => a.id);
}

export async function deleteSkill(viewer: Viewer, skillId: string): Promise<void> {
  const skill = await findSkill(viewer, skillId);
  const users = await agentsUsing(skill.universeId, skill.id);
  if (users.length) throw new AppError('skill_in_use', `agents ${users.join(', ')} reference this skill; detach it first`);
  await prisma.skill.delete({ where: { id: skill.id } });
}

export async function deleteRevision(viewer: Viewer, skillId: string, revisionId: string): Promise<void> {
  const rev = await findRevision(viewer, skillId, revisionId);
  const count = await prisma.skillRevision.count({ where: { skillId } });
  if (count <= 1) throw new AppError('last_revision', "a skill's only revision cannot be deleted; delete the skill instead");
  const users = await agentsUsing(viewer.universe.id, skillId, revisionId);
  if (users.length) throw new AppError('revision_in_use', `agents ${users.join(', ')} pin this revision`);
  await prisma.$transaction(async (tx) => {
    await tx.skillRevision.delete({ where: { id: rev.id } });
    const latest = await tx.skillRevision.findFirst({ where: { skillId }, orderBy: { id: 'desc' } });
    await tx.skill.update({ where: { id: skillId }, data: { latestRevisionId: latest?.id ?? null } });
  });
}
