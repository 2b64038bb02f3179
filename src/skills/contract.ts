// Skills: the JSON bundle body (multipart uploads carry the same files as parts), the skill and
// its revisions as returned. One definition each for REST, OpenAPI, GraphQL and the domain.
import { z } from 'zod';
import { dateTime } from '../contract/zod-walk.js';

const skillFileEncoding = z.enum(['utf8', 'base64']).meta({ id: 'SkillFileEncoding' });

const skillFileInput = z
  .strictObject({
    path: z.string().min(1).max(1024).describe('Relative path inside the skill'),
    content: z
      .string()
      .max(45 * 1024 * 1024)
      .describe('The bytes, as utf8 text or base64 (32 MiB in all)'),
    encoding: skillFileEncoding.default('utf8'),
    executable: z.boolean().optional(),
  })
  .meta({ id: 'SkillFileInput' });

export const skillBundleBody = z
  .strictObject({
    displayName: z.string().min(1).max(60).optional().describe("Default: SKILL.md's name (ignored on a new revision)"),
    files: z.array(skillFileInput).min(1).max(1000).describe('A complete snapshot; SKILL.md at the root with front-matter name and description'),
  })
  .meta({ id: 'SkillBundleInput' });
export type SkillBundleBody = z.output<typeof skillBundleBody>;

export const skillBody = z
  .strictObject({
    id: z.string(),
    displayName: z.string(),
    latestRevisionId: z.string().nullable().describe('What `latest` resolves to'),
    createdAt: dateTime(z.string()),
    updatedAt: dateTime(z.string()),
  })
  .meta({ id: 'Skill' });
export type SkillView = z.output<typeof skillBody>;

const skillFile = z
  .strictObject({
    path: z.string(),
    size: z.int32(),
    sha256: z.string(),
    executable: z.boolean(),
  })
  .meta({ id: 'SkillFile' });

export const skillRevisionBody = z
  .strictObject({
    id: z.string(),
    skillId: z.string(),
    name: z.string().describe("SKILL.md's front-matter name: the skill's identity"),
    description: z.string(),
    files: z.array(skillFile),
    createdAt: dateTime(z.string()),
  })
  .meta({ id: 'SkillRevision' });
export type SkillRevisionView = z.output<typeof skillRevisionBody>;

export const createdSkillBody = z.strictObject({ skill: skillBody, revision: skillRevisionBody }).meta({ id: 'CreatedSkill' });
export const skillAnswer = z.strictObject({ skill: skillBody }).meta({ id: 'SkillAnswer' });
export const revisionAnswer = z.strictObject({ revision: skillRevisionBody }).meta({ id: 'SkillRevisionAnswer' });
export const skillList = z
  .strictObject({
    skills: z.array(skillBody).describe('Newest first'),
    nextCursor: z.string().nullable().describe('Pass back as ?cursor= for the next page; null on the last page'),
  })
  .meta({ id: 'SkillList' });
export const revisionList = z.strictObject({ revisions: z.array(skillRevisionBody).describe('Newest first') }).meta({ id: 'SkillRevisionList' });
