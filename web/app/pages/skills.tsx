// Skills: a SKILL.md (name and description front-matter) agents can use. Create, upload a new
// revision (a new SKILL.md), delete; each skill's revisions.
import { doc, gql } from '../../shared/graphql.js';
import { useAsync } from '../lib/use-async.js';
import { when } from '../lib/format.js';
import { ErrorNote, Loading } from '../ui.js';
import { ResourcePage, optional, type Values } from '../resource.js';
import { Table } from '../table.js';

interface Skill {
  id: string;
  displayName: string;
  latestRevisionId: string | null;
  createdAt: string;
  updatedAt: string;
}
interface Revision {
  id: string;
  name: string;
  description: string;
  createdAt: string;
  files: { path: string; size: number }[];
}
const LIST = doc`query Skills { skills(first: 100) { edges { node { id displayName latestRevisionId createdAt updatedAt } } } }`;
const CREATE = doc`mutation CreateSkill($input: SkillBundleInput!) { createSkill(input: $input) { skill { id } } }`;
const REVISE = doc`mutation ReviseSkill($id: String!, $input: SkillBundleInput!) { createSkillRevision(skillId: $id, input: $input) { id } }`;
const DELETE = doc`mutation DeleteSkill($id: String!) { deleteSkill(id: $id) }`;
const REVISIONS = doc`query SkillRevisions($id: String!) { skillRevisions(skillId: $id) { id name description createdAt files { path size } } }`;

const template = (name = 'my-skill') => `---
name: ${name}
description: What this skill does and when to use it.
---

# ${name}

Instructions for the agent.
`;

const bundle = (v: Values) => ({
  displayName: optional(v.displayName),
  files: [{ path: 'SKILL.md', content: typeof v.skillMd === 'string' ? v.skillMd : '' }],
});

function Revisions({ skill }: { skill: Skill }) {
  const rows = useAsync(() => gql<{ skillRevisions: Revision[] }>(REVISIONS, { id: skill.id }).then((d) => d.skillRevisions), [skill]);
  if (!rows.data) return rows.error ? <ErrorNote error={rows.error} /> : <Loading what="revisions" />;
  return (
    <Table
      rows={rows.data}
      rowKey={(r) => r.id}
      caption={`Revisions of ${skill.displayName}`}
      columns={[
        {
          label: 'Revision',
          cell: (r) => (
            <>
              <code>{r.id}</code>
              {r.id === skill.latestRevisionId ? ' (latest)' : ''}
            </>
          ),
        },
        { label: 'Name', cell: (r) => r.name },
        { label: 'Description', cell: (r) => r.description },
        { label: 'Files', cell: (r) => r.files.map((f) => f.path).join(', ') },
        { label: 'Uploaded', cell: (r) => when(r.createdAt) },
      ]}
    />
  );
}

export function SkillsPage() {
  return (
    <ResourcePage<Skill>
      title="Skills"
      noun="skill"
      rowKey={(s) => s.id}
      rowName={(s) => s.displayName}
      intro={
        <>
          Skill bundles agents can use: a <code>SKILL.md</code> with <code>name</code> and <code>description</code> front-matter. Each upload is an immutable
          revision; agents follow the latest.
        </>
      }
      empty="No skills yet."
      load={() => gql<{ skills: { edges: { node: Skill }[] } }>(LIST).then((d) => d.skills.edges.map((e) => e.node))}
      columns={[
        {
          label: 'Skill',
          cell: (s) => (
            <>
              {s.displayName}
              <br />
              <small className="muted">
                <code>{s.id}</code>
              </small>
            </>
          ),
        },
        { label: 'Latest revision', cell: (s) => <code>{s.latestRevisionId ?? '—'}</code> },
        { label: 'Updated', cell: (s) => when(s.updatedAt) },
      ]}
      create={{
        initial: { skillMd: template() },
        fields: [
          { name: 'skillMd', label: 'SKILL.md', kind: 'textarea', required: true, rows: 10 },
          { name: 'displayName', label: 'Display name', hint: 'Default: the name in SKILL.md.', maxLength: 60 },
        ],
        submit: async (v) => void (await gql(CREATE, { input: bundle(v) })),
      }}
      edit={{
        label: 'New revision',
        fields: [
          {
            name: 'skillMd',
            label: 'SKILL.md',
            kind: 'textarea',
            required: true,
            rows: 10,
            hint: "A complete new snapshot; its name must stay the skill's name.",
          },
        ],
        // The API does not answer a revision's text: start from a template named after the skill.
        initial: (s) => ({ skillMd: template(s.displayName) }),
        submit: (s, v) => gql(REVISE, { id: s.id, input: { files: bundle(v).files } }),
      }}
      detail={{ label: 'Revisions', render: (s) => <Revisions skill={s} /> }}
      remove={{ run: (s) => gql(DELETE, { id: s.id }) }}
    />
  );
}
