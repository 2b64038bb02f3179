// /skills: bundles with immutable revisions. The two uploads read their own body (multipart
// parts or the JSON bundle, both validated in src/skills/upload.ts); every other route runs a
// GraphQL document whose answer converts by the zod schemas of src/skills/contract.ts.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { defineRoute } from '../route.js';
import { Ok } from '../schemas.js';
import { readSkillUpload } from '../../src/skills/upload.js';
import { createSkill, addRevision, skillView, skillRevisionView } from '../../src/skills/skills.js';
import {
  skillBundleBody,
  skillBody,
  skillRevisionBody,
  createdSkillBody,
  skillAnswer,
  revisionAnswer,
  skillList,
  revisionList,
} from '../../src/skills/contract.js';
import { selectionOf } from '../../src/contract/values.js';
import { connectionCursor } from '../../src/pagination/page-token.js';
import { nextCursorOf, nodesOf } from '../connections.js';
import { answerOnce } from '../idempotency.js';

const SKILL = selectionOf(skillBody);
const REVISION = selectionOf(skillRevisionBody);

type JsonSchema = Record<string, unknown>;
/** The request schema of a raw route's JSON body, self-contained (its `$defs` inlined). */
function inlineJsonSchema(schema: z.ZodType): JsonSchema {
  const {
    $defs = {},
    $schema: _,
    ...root
  } = z.toJSONSchema(schema, { io: 'input', target: 'draft-2020-12' }) as JsonSchema & { $defs?: Record<string, JsonSchema> };
  const inline = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(inline);
    if (!value || typeof value !== 'object') return value;
    const { $ref, ...rest } = value as JsonSchema;
    const target = typeof $ref === 'string' && $ref.startsWith('#/$defs/') ? $defs[$ref.slice('#/$defs/'.length)] : undefined;
    const own = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, inline(v)]));
    return target ? { ...(inline(target) as JsonSchema), ...own } : { ...own, ...($ref !== undefined ? { $ref } : {}) };
  };
  return inline(root) as JsonSchema;
}

/** What an upload's Idempotency-Key is checked against: the bundle read, each file by its content hash. */
function uploadFingerprint(upload: Awaited<ReturnType<typeof readSkillUpload>>): unknown {
  return {
    displayName: upload.displayName ?? null,
    files: upload.files.map((f) => ({ path: f.path, executable: f.executable, sha256: createHash('sha256').update(f.data).digest('hex') })),
  };
}

const uploadBody = {
  required: true,
  content: {
    'multipart/form-data': {
      schema: {
        type: 'object',
        required: ['files'],
        properties: {
          files: { type: 'array', items: { type: 'string', format: 'binary' }, description: 'one part per file; the filename is its path inside the skill' },
          display_name: { type: 'string', minLength: 1, maxLength: 60 },
        },
      },
    },
    'application/json': { schema: inlineJsonSchema(skillBundleBody) },
  },
};

export const skillRoutes = [
  defineRoute({
    method: 'GET',
    path: '/skills',
    operationId: 'listSkills',
    tag: 'Skills',
    scope: 'read',
    summary: 'Skills of the universe, newest first',
    query: z.strictObject({
      cursor: connectionCursor('skill').optional().describe('the nextCursor of the previous answer'),
      limit: z.coerce.number().int().min(1).max(100).default(20),
    }),
    document: `query Skills($first: Int, $after: String) { skills(first: $first, after: $after) { edges { node { ${SKILL} } } pageInfo { hasNextPage endCursor } } }`,
    variables: ({ query }) => ({ first: query.limit, after: query.cursor ?? null }),
    pick: (data) => ({ skills: nodesOf(data.skills), nextCursor: nextCursorOf(data.skills) }),
    response: skillList,
  }),
  defineRoute({
    method: 'POST',
    path: '/skills',
    operationId: 'createSkill',
    tag: 'Skills',
    scope: 'write',
    summary: 'Create a skill and upload revision 1 (SKILL.md with name and description front-matter required)',
    document: '',
    raw: async (req, res, ctx) => {
      const upload = await readSkillUpload(req);
      await answerOnce(req, res, ctx, uploadFingerprint(upload), async () => {
        const { skill, revision } = await createSkill(ctx.viewer!, upload);
        return { status: 201, body: { skill: skillView(skill), revision: skillRevisionView(revision) } satisfies z.output<typeof createdSkillBody> };
      });
    },
    idempotent: true,
    rawRequestBody: uploadBody,
    status: 201,
    response: createdSkillBody,
    errors: ['invalid_request', 'file_too_large'],
  }),
  defineRoute({
    method: 'GET',
    path: '/skills/{skillId}',
    operationId: 'getSkill',
    tag: 'Skills',
    scope: 'read',
    summary: 'One skill',
    document: `query Skill($skillId: String!) { skill(id: $skillId) { ${SKILL} } }`,
    response: skillAnswer,
  }),
  defineRoute({
    method: 'DELETE',
    path: '/skills/{skillId}',
    operationId: 'deleteSkill',
    tag: 'Skills',
    scope: 'write',
    summary: 'Delete a skill and all its revisions; 409 while an agent references it',
    document: `mutation Delete($skillId: String!) { ok: deleteSkill(id: $skillId) }`,
    response: Ok,
    errors: ['skill_in_use'],
  }),
  defineRoute({
    method: 'GET',
    path: '/skills/{skillId}/revisions',
    operationId: 'listSkillRevisions',
    tag: 'Skills',
    scope: 'read',
    summary: 'Revisions, newest first',
    document: `query Revisions($skillId: String!) { revisions: skillRevisions(skillId: $skillId) { ${REVISION} } }`,
    response: revisionList,
  }),
  defineRoute({
    method: 'POST',
    path: '/skills/{skillId}/revisions',
    operationId: 'createSkillRevision',
    tag: 'Skills',
    scope: 'write',
    summary: "Upload a complete new snapshot; its SKILL.md name must equal the skill's name",
    document: '',
    raw: async (req, res, ctx) => {
      const upload = await readSkillUpload(req);
      await answerOnce(req, res, ctx, uploadFingerprint(upload), async () => {
        const revision = await addRevision(ctx.viewer!, String(req.params.skillId), upload);
        return { status: 201, body: { revision: skillRevisionView(revision) } satisfies z.output<typeof revisionAnswer> };
      });
    },
    idempotent: true,
    rawRequestBody: uploadBody,
    status: 201,
    response: revisionAnswer,
    errors: ['invalid_request', 'name_mismatch', 'file_too_large'],
  }),
  defineRoute({
    method: 'GET',
    path: '/skills/{skillId}/revisions/{revisionId}',
    operationId: 'getSkillRevision',
    tag: 'Skills',
    scope: 'read',
    summary: 'One revision: metadata and file manifest',
    document: `query Revision($skillId: String!, $revisionId: String!) { revision: skillRevision(skillId: $skillId, id: $revisionId) { ${REVISION} } }`,
    response: revisionAnswer,
  }),
  defineRoute({
    method: 'DELETE',
    path: '/skills/{skillId}/revisions/{revisionId}',
    operationId: 'deleteSkillRevision',
    tag: 'Skills',
    scope: 'write',
    summary: 'Delete a revision (not the only one; not one an agent pins)',
    document: `mutation Delete($skillId: String!, $revisionId: String!) { ok: deleteSkillRevision(skillId: $skillId, id: $revisionId) }`,
    response: Ok,
    errors: ['last_revision', 'revision_in_use'],
  }),
];
