// /skills: bundles with immutable revisions (multipart or JSON uploads).
import { z } from 'zod';
import { defineRoute } from '../route.js';
import { Ok, Timestamp } from '../schemas.js';
import { readSkillUpload } from '../../src/skills/upload.js';
import { createSkill, addRevision, type ManifestEntry } from '../../src/skills/skills.js';
import { connectionCursor } from '../../src/pagination/page-token.js';

const SKILL_FIELDS = 'id displayName latestRevisionId createdAt updatedAt';
const REVISION_FIELDS = 'id skillId name description files { path size sha256 executable } createdAt';
const Skill = z.object({ id: z.string(), displayName: z.string(), latestRevisionId: z.string().nullable(), createdAt: Timestamp, updatedAt: Timestamp }).meta({ id: 'Skill' });
const Revision = z.object({
  id: z.string(), skillId: z.string(), name: z.string(), description: z.string(),
  files: z.array(z.object({ path: z.string(), size: z.int(), sha256: z.string(), executable: z.boolean() })), createdAt: Timestamp,
}).meta({ id: 'SkillRevision' });

const skillJson = (s: { id: string; displayName: string; latestRevisionId: string | null; createdAt: Date; updatedAt: Date }) => ({
  id: s.id, displayName: s.displayName, latestRevisionId: s.latestRevisionId, createdAt: s.createdAt.toISOString(), updatedAt: s.updatedAt.toISOString(),
});
const revisionJson = (r: { id: string; skillId: string; name: string; description: string; files: unknown; createdAt: Date }) => ({
  id: r.id, skillId: r.skillId, name: r.name, description: r.description,
  files: (r.files as ManifestEntry[]).map(({ path, size, sha256, executable }) => ({ path, size, sha256, executable })), createdAt: r.createdAt.toISOString(),
});

const uploadBody = {
  required: true,
  content: {
    'multipart/form-data': { schema: { type: 'object', required: ['files'], properties: { files: { type: 'array', items: { type: 'string', format: 'binary' }, description: 'one part per file; the filename is its path inside the skill' }, display_name: { type: 'string', maxLength: 60 } } } },
    'application/json': { schema: { type: 'object', required: ['files'], properties: { displayName: { type: 'string', maxLength: 60 }, files: { type: 'array', minItems: 1, items: { type: 'object', required: ['path', 'content'], properties: { path: { type: 'string' }, content: { type: 'string' }, encoding: { type: 'string', enum: ['utf8', 'base64'] }, executable: { type: 'boolean' } } } } } } },
  },
};

export const skillRoutes = [
  defineRoute({
    method: 'GET', path: '/skills', operationId: 'listSkills', tag: 'Skills', scope: 'read',
    summary: 'Skills of the universe, newest first',
    query: z.object({ cursor: connectionCursor('skill').optional().describe('the nextCursor of the previous answer'), limit: z.coerce.number().int().min(1).max(100).default(20) }),
    document: `query Skills($first: Int, $after: String) { skills(first: $first, after: $after) { edges { node { ${SKILL_FIELDS} } } pageInfo { hasNextPage endCursor } } }`,
    variables: ({ query }) => ({ first: query.limit, after: query.cursor ?? null }),
    result: (d) => ({ skills: d.skills.edges.map((e: any) => e.node), nextCursor: d.skills.pageInfo.hasNextPage ? d.skills.pageInfo.endCursor : null }),
    response: z.object({ skills: z.array(Skill), nextCursor: z.string().nullable() }),
  }),
  defineRoute({
    method: 'POST', path: '/skills', operationId: 'createSkill', tag: 'Skills', scope: 'write',
    summary: 'Create a skill and upload revision 1 (SKILL.md with name and description front-matter required)',
    document: '',
    raw: async (req, res, ctx) => {
      const { skill, revision } = await createSkill(ctx.viewer!, await readSkillUpload(req));
      res.status(201).json({ skill: skillJson(skill), revision: revisionJson(revision) });
    },
    rawRequestBody: uploadBody,
    rawResponseContent: { 'application/json': { schema: { type: 'object', properties: { skill: { $ref: '#/components/schemas/Skill' }, revision: { $ref: '#/components/schemas/SkillRevision' } } } } },
    status: 201,
    result: (d) => d,
    response: z.object({ skill: Skill, revision: Revision }),
    errors: ['invalid_request', 'file_too_large'],
  }),
  defineRoute({
    method: 'GET', path: '/skills/{skillId}', operationId: 'getSkill', tag: 'Skills', scope: 'read',
    summary: 'One skill',
    document: `query Skill($id: String!) { skill(id: $id) { ${SKILL_FIELDS} } }`,
    variables: ({ params }) => ({ id: params.skillId }),
    result: (d) => ({ skill: d.skill }),
    response: z.object({ skill: Skill }),
  }),
  defineRoute({
    method: 'DELETE', path: '/skills/{skillId}', operationId: 'deleteSkill', tag: 'Skills', scope: 'write',
    summary: 'Delete a skill and all its revisions; 409 while an agent references it',
    document: `mutation Delete($id: String!) { deleteSkill(id: $id) }`,
    variables: ({ params }) => ({ id: params.skillId }),
    result: () => ({ ok: true }),
    response: Ok,
    errors: ['skill_in_use'],
  }),
  defineRoute({
    method: 'GET', path: '/skills/{skillId}/revisions', operationId: 'listSkillRevisions', tag: 'Skills', scope: 'read',
    summary: 'Revisions, newest first',
    document: `query Revisions($id: String!) { skillRevisions(skillId: $id) { ${REVISION_FIELDS} } }`,
    variables: ({ params }) => ({ id: params.skillId }),
    result: (d) => ({ revisions: d.skillRevisions }),
    response: z.object({ revisions: z.array(Revision) }),
  }),
  defineRoute({
    method: 'POST', path: '/skills/{skillId}/revisions', operationId: 'createSkillRevision', tag: 'Skills', scope: 'write',
    summary: "Upload a complete new snapshot; its SKILL.md name must equal the skill's name",
    document: '',
    raw: async (req, res, ctx) => {
      const revision = await addRevision(ctx.viewer!, String(req.params.skillId), await readSkillUpload(req));
      res.status(201).json({ revision: revisionJson(revision) });
    },
    rawRequestBody: uploadBody,
    rawResponseContent: { 'application/json': { schema: { type: 'object', properties: { revision: { $ref: '#/components/schemas/SkillRevision' } } } } },
    status: 201,
    result: (d) => d,
    response: z.object({ revision: Revision }),
    errors: ['invalid_request', 'name_mismatch', 'file_too_large'],
  }),
  defineRoute({
    method: 'GET', path: '/skills/{skillId}/revisions/{revisionId}', operationId: 'getSkillRevision', tag: 'Skills', scope: 'read',
    summary: 'One revision: metadata and file manifest',
    document: `query Revision($skillId: String!, $id: String!) { skillRevision(skillId: $skillId, id: $id) { ${REVISION_FIELDS} } }`,
    variables: ({ params }) => ({ skillId: params.skillId, id: params.revisionId }),
    result: (d) => ({ revision: d.skillRevision }),
    response: z.object({ revision: Revision }),
  }),
  defineRoute({
    method: 'DELETE', path: '/skills/{skillId}/revisions/{revisionId}', operationId: 'deleteSkillRevision', tag: 'Skills', scope: 'write',
    summary: "Delete a revision (not the only one; not one an agent pins)",
    document: `mutation Delete($skillId: String!, $id: String!) { deleteSkillRevision(skillId: $skillId, id: $id) }`,
    variables: ({ params }) => ({ skillId: params.skillId, id: params.revisionId }),
    result: () => ({ ok: true }),
    response: Ok,
    errors: ['last_revision', 'revision_in_use'],
  }),
];
