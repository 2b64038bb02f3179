// Skills in GraphQL (skill bundles as JSON files).
import { builder } from './builder.js';
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { createSkill, findSkill, addRevision, findRevision, deleteSkill, deleteRevision, filesFromJson, type ManifestEntry } from '../skills/skills.js';

const SkillType = builder.prismaObject('Skill', {
  fields: (t) => ({
    id: t.exposeID('id'),
    displayName: t.exposeString('displayName'),
    name: t.exposeString('name'),
    latestRevisionId: t.exposeString('latestRevisionId', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});
const SkillFile = builder.simpleObject('SkillFile', { fields: (t) => ({ path: t.string(), size: t.int(), sha256: t.string(), executable: t.boolean() }) });
const SkillRevisionType = builder.prismaObject('SkillRevision', {
  fields: (t) => ({
    id: t.exposeID('id'),
    skillId: t.exposeString('skillId'),
    name: t.exposeString('name'),
    description: t.exposeString('description'),
    files: t.field({ type: [SkillFile], resolve: (r) => (r.files as ManifestEntry[]).map(({ path, size, sha256, executable }) => ({ path, size, sha256, executable })) }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});
const CreatedSkill = builder.simpleObject('CreatedSkill', {
  fields: (t) => ({ skill: t.field({ type: SkillType }), revision: t.field({ type: SkillRevisionType }) }),
});

builder.queryField('skills', (t) =>
  t.prismaConnection({
    type: 'Skill', cursor: 'id', maxSize: 100, defaultSize: 20,
    authScopes: { read: true },
    resolve: (query, _r, _a, ctx) => prisma.skill.findMany({ ...query, where: { universeId: ctx.viewer!.universe.id }, orderBy: { id: 'desc' } }),
  }),
);
builder.queryField('skill', (t) =>
  t.prismaField({ type: 'Skill', args: { id: t.arg.string({ required: true }) }, authScopes: { read: true }, resolve: (_q, _r, { id }, ctx) => findSkill(ctx.viewer!, id) }),
);
builder.queryField('skillRevisions', (t) =>
  t.prismaField({
    type: ['SkillRevision'], args: { skillId: t.arg.string({ required: true }) }, authScopes: { read: true },
    resolve: async (query, _r, { skillId }, ctx) => prisma.skillRevision.findMany({ ...query, where: { skillId: (await findSkill(ctx.viewer!, skillId)).id }, orderBy: { id: 'desc' } }),
  }),
);
builder.queryField('skillRevision', (t) =>
  t.prismaField({ type: 'SkillRevision', args: { skillId: t.arg.string({ required: true }), id: t.arg.string({ required: true }) }, authScopes: { read: true }, resolve: (_q, _r, a, ctx) => findRevision(ctx.viewer!, a.skillId, a.id) }),
);
builder.mutationField('createSkill', (t) =>
  t.field({
    type: CreatedSkill,
    description: 'JSON body: {displayName?, files: [{path, content, encoding, executable?}]}; SKILL.md with name and description front-matter required',
    args: { input: t.arg({ type: 'JSONObject', required: true }) }, authScopes: { write: true },
    resolve: (_r, { input }, ctx) => createSkill(ctx.viewer!, filesFromJson(input)),
  }),
);
builder.mutationField('createSkillRevision', (t) =>
  t.prismaField({ type: 'SkillRevision', args: { skillId: t.arg.string({ required: true }), input: t.arg({ type: 'JSONObject', required: true }) }, authScopes: { write: true }, resolve: (_q, _r, a, ctx) => addRevision(ctx.viewer!, a.skillId, filesFromJson(a.input)) }),
);
builder.mutationField('deleteSkill', (t) =>
  t.boolean({ args: { id: t.arg.string({ required: true }) }, authScopes: { write: true }, resolve: async (_r, { id }, ctx) => { await deleteSkill(ctx.viewer!, id); return true; } }),
);
builder.mutationField('deleteSkillRevision', (t) =>
  t.boolean({ args: { skillId: t.arg.string({ required: true }), id: t.arg.string({ required: true }) }, authScopes: { write: true }, resolve: async (_r, a, ctx) => { await deleteRevision(ctx.viewer!, a.skillId, a.id); return true; } }),
);
