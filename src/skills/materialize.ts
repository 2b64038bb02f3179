// At provision, an agent's skills are placed in the sandbox in the folder the session's engine
// reads skills from (src/engines/cli/core/engine-home.ts: `$CLAUDE_CONFIG_DIR/skills/<name>` for
// claude_code, `$CODEX_HOME/skills/<name>` for codex, … under the CLI's per-session home), or
// `/workspace/.skills/<name>` for hermes, which lists them in its system prompt: `skill`
// attachments from their pinned (or latest) revision, `github` ones cloned outside the sandbox (a
// private one with the agent secret named by tokenSecretRef). A CLI loads a skill only when its
// SKILL.md has front-matter name and description, in a folder named like the skill: a cloned
// skill for a CLI gets what it lacks (the repository's name, a description naming its URL) and
// its folder takes the skill's name.
import fsp from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { prisma } from '../db/client.js';
import { blobStore } from '../blobs/blob-store.js';
import { open } from '../crypto/secret-box.js';
import type { Sandbox } from '../sandbox/driver.js';
import { cloneRepository } from '../resources/clone.js';
import { skillsFolder } from '../engines/cli/core/engine-home.js';
import type { ManifestEntry } from './skills.js';
import { logger } from '../logger.js';
import type { InstalledSkill } from '../engines/installed-skills.js';

type Attachment = { type: 'skill'; skillId: string; version?: string } | { type: 'github'; url: string; ref?: string; tokenSecretRef?: string };

/** A skill placed in the sandbox: its name, description and folder. */

const SAFE_FOLDER = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export async function materializeSkills(sessionId: string, sandbox: Sandbox): Promise<void> {
  const session = await prisma.session.findUnique({ where: { id: sessionId }, include: { agent: true } });
  if (!session?.agent) return;
  const folder = skillsFolder(session.agentType);
  const installed: InstalledSkill[] = [];
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
        const dir = `${folder.dir}/${rev.name}`;
        for (const f of rev.files as ManifestEntry[]) {
          await sandbox.writeFile(`${dir}/${f.path}`, await blobStore().read(f.blobKey), { mode: f.executable ? 0o755 : 0o644 });
        }
        installed.push({ name: rev.name, description: rev.description, path: dir });
      } else {
        if (!sandbox.hostWorkspace) continue;
        const repo =
          new URL(a.url).pathname
            .replace(/\.git$/, '')
            .split('/')
            .filter(Boolean)
            .pop() ?? 'skill';
        const secret = a.tokenSecretRef
          ? await prisma.agentSecret.findUnique({ where: { agentId_key: { agentId: session.agent.id, key: a.tokenSecretRef } } })
          : null;
        const hostDir = (name: string) => path.join(sandbox.hostWorkspace!, path.posix.relative('/workspace', folder.dir), name);
        await cloneRepository({
          url: a.url,
          token: secret ? open(secret.ciphertext) : null,
          dest: hostDir(repo),
          checkout: a.ref ? (/^[0-9a-f]{7,64}$/i.test(a.ref) ? { type: 'commit', sha: a.ref } : { type: 'branch', name: a.ref }) : null,
        });
        const fallback = { name: repo, description: `skill from ${a.url}` };
        const { name, description } = folder.readByCli
          ? await ensureFrontMatter(sandbox, `${folder.dir}/${repo}/SKILL.md`, fallback)
          : ((await frontMatter(sandbox, `${folder.dir}/${repo}/SKILL.md`)) ?? fallback);
        let dir = `${folder.dir}/${repo}`;
        if (folder.readByCli && name !== repo && SAFE_FOLDER.test(name) && !(await sandbox.stat(`${folder.dir}/${name}`))) {
          await fsp.rename(hostDir(repo), hostDir(name));
          dir = `${folder.dir}/${name}`;
        }
        installed.push({ name, description, path: dir });
      }
    } catch (err) {
      logger.warn({ err, sessionId }, 'a skill could not be placed in the sandbox');
    }
  }
  await prisma.session.update({ where: { id: sessionId }, data: { installedSkills: installed } });
}

/** SKILL.md's text split into its front-matter fields and its body (no front-matter: all body). */
async function readSkillMd(sandbox: Sandbox, file: string): Promise<{ meta: Record<string, unknown>; body: string }> {
  const text = (await sandbox.stat(file)) ? (await sandbox.readFile(file)).toString('utf8') : '';
  const m = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(\r?\n|$)/.exec(text);
  if (!m) return { meta: {}, body: text };
  let meta: unknown = null;
  try {
    meta = parseYaml(m[1]!);
  } catch {
    /* not YAML: treated as absent */
  }
  return { meta: meta && typeof meta === 'object' && !Array.isArray(meta) ? (meta as Record<string, unknown>) : {}, body: text.slice(m[0].length) };
}

const text = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim() : null);

/** The name and description SKILL.md's front-matter gives, or null without both. */
async function frontMatter(sandbox: Sandbox, file: string): Promise<{ name: string; description: string } | null> {
  const { meta } = await readSkillMd(sandbox, file);
  const name = text(meta.name);
  const description = text(meta.description);
  return name && description ? { name, description } : null;
}

/** SKILL.md with front-matter name and description (the fallback's where missing), rewritten only when it lacked them. */
async function ensureFrontMatter(
  sandbox: Sandbox,
  file: string,
  fallback: { name: string; description: string },
): Promise<{ name: string; description: string }> {
  const { meta, body } = await readSkillMd(sandbox, file);
  const name = text(meta.name) ?? fallback.name;
  const description = (text(meta.description) ?? fallback.description).slice(0, 1024);
  if (meta.name !== name || meta.description !== description) {
    await sandbox.writeFile(file, `---\n${stringifyYaml({ ...meta, name, description })}---\n${body}`);
  }
  return { name, description };
}
