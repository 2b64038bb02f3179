// Skills in GraphQL (bundles as JSON files; multipart uploads are REST-only byte streams).
// Inputs and outputs are derived from the zod schemas of src/skills/contract.ts.
import { builder } from './builder.js';
import {
  createSkill,
  findSkill,
  addRevision,
  findRevision,
  deleteSkill,
  deleteRevision,
  filesFromJson,
  listSkills,
  listRevisions,
  skillView,
  skillRevisionView,
} from '../skills/skills.js';
import { skillBundleBody, skillBody, skillRevisionBody, createdSkillBody } from '../skills/contract.js';
import { inputOf, objectOf } from './graphql-types.js';
import { takeInput } from './input.js';
import { newestFirst } from './id-connection.js';

const SkillType = objectOf(skillBody);
const SkillRevisionType = objectOf(skillRevisionBody);
const SkillBundleInput = inputOf(skillBundleBody, 'SkillBundle');

builder.queryField('skills', (t) =>
  t.connection({
    type: SkillType,
    description: 'Skills of the universe, newest first',
    authScopes: { read: true },
    resolve: (_r, args, ctx) => newestFirst(args, { defaultSize: 20, maxSize: 100 }, async (page) => (await listSkills(ctx.viewer!, page)).map(skillView)),
  }),
);
builder.queryField('skill', (t) =>
  t.field({
    type: SkillType,
    args: { id: t.arg.string({ required: true }) },
    authScopes: { read: true },
    resolve: async (_r, { id }, ctx) => skillView(await findSkill(ctx.viewer!, id)),
  }),
);
builder.queryField('skillRevisions', (t) =>
  t.field({
    type: [SkillRevisionType],
    description: 'Revisions, newest first',
    args: { skillId: t.arg.string({ required: true }) },
    authScopes: { read: true },
    resolve: async (_r, { skillId }, ctx) => (await listRevisions(ctx.viewer!, skillId)).map(skillRevisionView),
  }),
);
builder.queryField('skillRevision', (t) =>
  t.field({
    type: SkillRevisionType,
    args: { skillId: t.arg.string({ required: true }), id: t.arg.string({ required: true }) },
    authScopes: { read: true },
    resolve: async (_r, a, ctx) => skillRevisionView(await findRevision(ctx.viewer!, a.skillId, a.id)),
  }),
);
builder.mutationField('createSkill', (t) =>
  t.field({
    type: objectOf(createdSkillBody),
    description: 'Create a skill and its revision 1; SKILL.md with name and description front-matter required',
    args: { input: t.arg({ type: SkillBundleInput, required: true }) },
    authScopes: { write: true },
    resolve: async (_r, { input }, ctx) => {
      const { skill, revision } = await createSkill(ctx.viewer!, filesFromJson(takeInput(ctx, skillBundleBody, input)));
      return { skill: skillView(skill), revision: skillRevisionView(revision) };
    },
  }),
);
builder.mutationField('createSkillRevision', (t) =>
  t.field({
    type: SkillRevisionType,
    description: "Upload a complete new snapshot; its SKILL.md name must equal the skill's name",
    args: { skillId: t.arg.string({ required: true }), input: t.arg({ type: SkillBundleInput, required: true }) },
    authScopes: { write: true },
    resolve: async (_r, a, ctx) => skillRevisionView(await addRevision(ctx.viewer!, a.skillId, filesFromJson(takeInput(ctx, skillBundleBody, a.input)))),
  }),
);
builder.mutationField('deleteSkill', (t) =>
  t.boolean({
    description: 'Delete a skill and all its revisions (skill_in_use while an agent references it)',
    args: { id: t.arg.string({ required: true }) },
    authScopes: { write: true },
    resolve: async (_r, { id }, ctx) => {
      await deleteSkill(ctx.viewer!, id);
      return true;
    },
  }),
);
builder.mutationField('deleteSkillRevision', (t) =>
  t.boolean({
    description: 'Delete a revision (not the only one; not one an agent pins)',
    args: { skillId: t.arg.string({ required: true }), id: t.arg.string({ required: true }) },
    authScopes: { write: true },
    resolve: async (_r, a, ctx) => {
      await deleteRevision(ctx.viewer!, a.skillId, a.id);
      return true;
    },
  }),
);
