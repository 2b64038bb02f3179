// At provision, an agent's skills are placed in the sandbox under /workspace/.skills/<name>:
// `skill` attachments from their pinned (or latest) revision, `github` ones cloned outside
// the sandbox (a private one with the agent secret named by tokenSecretRef).
import path from 'node:path';
import { prisma } from '../db/client.js';
import { blobStore } from '../files/blob-store.js';
import { open } from '../crypto/secret-box.js';
import type { Sandbox } from '../sandbox/driver.js';
import { cloneRepository } from '../resources/clone.js';
import { readBundle } from './bundle.js';
import type { ManifestEntry } from './skills.js';
import { logger } from '../logger.js';

export const SKILLS_DIR = '/workspace/.skills';

type Attachment = { type: 'skill'; skillId: string; version?: string } | { type: 'github'; url: string; ref?: string; tokenSecretRef?: string };

export async function materializeSkills(sessionId: string, sandbox: Sandbox): Promise<void> {
  const session = await prisma.session.findUnique({ where: { id: sessionId }, include: { agent: true } });
  if (!session?.agent) return;
  const installed: { name: string; description: string; path: string }[] = [];
  for (const a of session.agent.skills as Attachment[]) {
    try {
      if (a.type === 'skill') {
        const skill = await prisma.skill.findFirst({ where: { id: a.skillId, universeId: session.universeId } });
        const revisionId = !a.version || a.version === 'latest' ? skill?.latestRevisionId : a.version;
        const rev = revisionId ? await prisma.skillRevision.findFirst({ where: { id: revisionId, skillId: a.skillId } }) : null;
        if (!skill || !rev) {
          logger.warn({ sessionId, skill: a.skillId }, 'attached skill not found; skipped');
          continue;
        }
        const dir = `${SKILLS_DIR}/${rev.name}`;
        for (const f of rev.files as ManifestEntry[]) {
          await sandbox.writeFile(`${dir}/${f.path}`, await blobStore().read(f.blobKey), { mode: f.executable ? 0o755 : 0o644 });
        }
        installed.push({ name: rev.name, description: rev.description, path: dir });
      } else {
        if (!sandbox.hostWorkspace) continue;
        const repo = new URL(a.url).pathname.replace(/\.git$/, '').split('/').filter(Boolean).pop() ?? 'skill';
        const secret = a.tokenSecretRef ? await prisma.agentSecret.findUnique({ where: { agentId_key: { agentId: session.agent.id, key: a.tokenSecretRef } } }) : null;
        const dest = path.join(sandbox.hostWorkspace, '.skills', repo);
        await cloneRepository({ url: a.url, token: secret ? open(secret.ciphertext) : null, dest, checkout: a.ref ? (/^[0-9a-f]{7,64}$/i.test(a.ref) ? { type: 'commit', sha: a.ref } : { type: 'branch', name: a.ref }) : null });
        let description = `skill from ${a.url}`;
        let name = repo;
        try {
          const manifest = readBundle([{ path: 'SKILL.md', data: await sandbox.readFile(`${SKILLS_DIR}/${repo}/SKILL.md`), executable: false }]);
          ({ name, description } = manifest);
        } catch {
          /* a repository without SKILL.md front-matter keeps its folder name */
        }
        installed.push({ name, description, path: `${SKILLS_DIR}/${repo}` });
      }
    } catch (err) {
      logger.warn({ err, sessionId }, 'a skill could not be placed in the sandbox');
    }
  }
  await prisma.session.update({ where: { id: sessionId }, data: { installedSkills: installed } });
}

export async function installedSkills(sessionId: string): Promise<{ name: string; description: string; path: string }[]> {
  const s = await prisma.session.findUnique({ where: { id: sessionId }, select: { installedSkills: true } });
  return (s?.installedSkills ?? []) as { name: string; description: string; path: string }[];
}
