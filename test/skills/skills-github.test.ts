// `github` skills cloned at provision into the folder the session's engine reads skills from: a
// CLI loads a skill only when SKILL.md has front-matter name and description in a folder named
// like the skill, so a cloned skill for a CLI gets what it lacks (the repository's name, a
// description naming its URL; the body kept) and its folder takes the skill's name. A complete
// SKILL.md is left as it is, and hermes (which lists skills in its prompt) gets the clone as cloned.
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startGitServer, type GitServer } from '../helpers/git-server.js';
import { readySession } from '../helpers/sessions.js';
import { config } from '../../src/config.js';
import { prisma } from '../../src/db/client.js';

let s: TestServer;
let git: GitServer;
const repos: Record<string, string> = {};
const COMPLETE = '---\nname: complete\ndescription: Draws charts from CSV files.\nlicense: MIT\n---\n# Charts\nUse plot.sh.\n';

beforeAll(async () => {
  s = await startTestServer();
  git = await startGitServer();
  repos.bare = git.createRepo('acme/bare-skill', { 'SKILL.md': 'Run ./go.sh to deploy.\n', 'go.sh': 'echo go\n' }).url;
  repos.named = git.createRepo('acme/tools', { 'SKILL.md': '---\nname: chart-maker\n---\nMake charts.\n' }).url;
  repos.complete = git.createRepo('acme/complete', { 'SKILL.md': COMPLETE }).url;
});
afterAll(async () => {
  await s?.stop();
  await git?.close();
});

const hostPath = (sessionId: string, inside: string) =>
  path.join(config().dataDir, 'sandboxes', sessionId, 'workspace', path.posix.relative('/workspace', inside));

function frontMatter(file: string): { meta: Record<string, unknown>; body: string } {
  const m = /^---\n([\s\S]*?)\n---\n/.exec(fs.readFileSync(file, 'utf8'));
  if (!m) throw new Error(`${file} has no front-matter`);
  return { meta: parseYaml(m[1]!) as Record<string, unknown>, body: fs.readFileSync(file, 'utf8').slice(m[0].length) };
}

describe('github skills at provision', () => {
  it('for a CLI: missing front-matter is added (repository name, description naming the URL), the folder takes the skill name, a complete SKILL.md is untouched', async () => {
    const { session } = await readySession(s, {
      agentType: 'claude_code',
      skills: [
        { type: 'github', url: repos.bare },
        { type: 'github', url: repos.named },
        { type: 'github', url: repos.complete },
      ],
    });
    const installed = (await prisma.session.findUniqueOrThrow({ where: { id: session.id } })).installedSkills as {
      name: string;
      description: string;
      path: string;
    }[];
    const folder = path.posix.dirname(installed[0]!.path);
    expect(folder.startsWith('/workspace/.agent/claude_code')).toBe(true);
    expect(installed).toEqual([
      { name: 'bare-skill', description: `skill from ${repos.bare}`, path: `${folder}/bare-skill` },
      { name: 'chart-maker', description: `skill from ${repos.named}`, path: `${folder}/chart-maker` },
      { name: 'complete', description: 'Draws charts from CSV files.', path: `${folder}/complete` },
    ]);

    // No front-matter at all: both fields added, the body and the other files kept.
    const bare = frontMatter(hostPath(session.id, `${folder}/bare-skill/SKILL.md`));
    expect(bare.meta).toEqual({ name: 'bare-skill', description: `skill from ${repos.bare}` });
    expect(bare.body).toBe('Run ./go.sh to deploy.\n');
    expect(fs.readFileSync(hostPath(session.id, `${folder}/bare-skill/go.sh`), 'utf8')).toBe('echo go\n');

    // A name but no description: the description added, the folder renamed after the name.
    const named = frontMatter(hostPath(session.id, `${folder}/chart-maker/SKILL.md`));
    expect(named.meta).toEqual({ name: 'chart-maker', description: `skill from ${repos.named}` });
    expect(named.body).toBe('Make charts.\n');
    expect(fs.existsSync(hostPath(session.id, `${folder}/tools`))).toBe(false);

    // Complete: byte for byte as cloned (other front-matter fields too).
    expect(fs.readFileSync(hostPath(session.id, `${folder}/complete/SKILL.md`), 'utf8')).toBe(COMPLETE);
  }, 60_000);

  it('for hermes: the clone is left as cloned under /workspace/.skills and listed with the fallback', async () => {
    const { session } = await readySession(s, {
      skills: [
        { type: 'github', url: repos.bare },
        { type: 'github', url: repos.named },
      ],
    });
    const installed = (await prisma.session.findUniqueOrThrow({ where: { id: session.id } })).installedSkills;
    expect(installed).toEqual([
      { name: 'bare-skill', description: `skill from ${repos.bare}`, path: '/workspace/.skills/bare-skill' },
      { name: 'tools', description: `skill from ${repos.named}`, path: '/workspace/.skills/tools' },
    ]);
    expect(fs.readFileSync(hostPath(session.id, '/workspace/.skills/bare-skill/SKILL.md'), 'utf8')).toBe('Run ./go.sh to deploy.\n');
    expect(fs.readFileSync(hostPath(session.id, '/workspace/.skills/tools/SKILL.md'), 'utf8')).toBe('---\nname: chart-maker\n---\nMake charts.\n');
  }, 60_000);
});
