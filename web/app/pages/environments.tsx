// Environments: packages a session installs at start and its network allow-list; create, edit
// (a packages change is a new version), archive (new sessions naming it are refused).
import { doc, gql } from '../../shared/graphql.js';
import { when } from '../lib/format.js';
import { Badge } from '../ui.js';
import { ResourcePage, lines, optional, text, type FieldSpec, type Values } from '../resource.js';

interface Env {
  id: string;
  name: string;
  description: string | null;
  archivedAt: string | null;
  updatedAt: string;
  packages: { apt: string[]; npm: string[]; pip: string[] };
  network: { allowedHosts: string[] };
}
const FIELDS = 'id name description archivedAt updatedAt packages { apt npm pip } network { allowedHosts }';
const LIST = doc`query Environments { environments(first: 100) { edges { node { ${FIELDS} } } } }`;
const CREATE = doc`mutation CreateEnvironment($input: CreateEnvironmentInput!) { createEnvironment(input: $input) { id } }`;
const UPDATE = doc`mutation UpdateEnvironment($id: String!, $input: UpdateEnvironmentInput!) { updateEnvironment(id: $id, input: $input) { id } }`;
const ARCHIVE = doc`mutation ArchiveEnvironment($id: String!) { archiveEnvironment(id: $id) { id archivedAt } }`;

const fields: FieldSpec[] = [
  { name: 'name', label: 'Name', required: true, maxLength: 120 },
  { name: 'description', label: 'Description', kind: 'textarea', rows: 2, maxLength: 2048 },
  { name: 'apt', label: 'apt packages', kind: 'lines', hint: 'One Debian package a line, optionally name=version.' },
  { name: 'npm', label: 'npm packages', kind: 'lines', hint: 'One a line, optionally @version.' },
  { name: 'pip', label: 'pip packages', kind: 'lines', hint: 'One a line, optionally name==version.' },
  {
    name: 'hosts',
    label: 'Allowed hosts',
    kind: 'lines',
    hint: 'One host a line (*.example.com for subdomains); empty: no outbound access but the model gateway.',
  },
];

// An emptied description is cleared (null); on create it is simply left out.
const input = (v: Values) => ({
  name: text(v.name),
  description: text(v.description) || null,
  packages: { apt: lines(v.apt), npm: lines(v.npm), pip: lines(v.pip) },
  network: { allowedHosts: lines(v.hosts) },
});

const pkgs = (e: Env) => {
  const all = [...e.packages.apt.map((p) => `apt ${p}`), ...e.packages.npm.map((p) => `npm ${p}`), ...e.packages.pip.map((p) => `pip ${p}`)];
  return all.length ? all.join(', ') : 'none';
};

export function EnvironmentsPage() {
  return (
    <ResourcePage<Env>
      title="Environments"
      noun="environment"
      rowKey={(e) => e.id}
      rowName={(e) => e.name}
      intro={<>What a session installs when it starts (apt, npm, pip) and the hosts it may reach. Name one when starting a session.</>}
      empty="No environments yet."
      load={() => gql<{ environments: { edges: { node: Env }[] } }>(LIST).then((d) => d.environments.edges.map((e) => e.node))}
      columns={[
        {
          label: 'Environment',
          cell: (e) => (
            <>
              {e.name}
              <br />
              <small className="muted">
                <code>{e.id}</code>
              </small>
              {e.description ? (
                <>
                  <br />
                  <small>{e.description}</small>
                </>
              ) : null}
            </>
          ),
        },
        { label: 'Packages', cell: pkgs },
        { label: 'Allowed hosts', cell: (e) => e.network.allowedHosts.join(', ') || 'model gateway only' },
        { label: 'Updated', cell: (e) => when(e.updatedAt) },
        { label: 'State', cell: (e) => (e.archivedAt ? <Badge tone="warn">archived</Badge> : <Badge tone="good">active</Badge>) },
      ]}
      create={{ fields, submit: async (v) => void (await gql(CREATE, { input: input(v) })) }}
      edit={{
        fields,
        show: (e) => !e.archivedAt,
        initial: (e) => ({
          name: e.name,
          description: e.description ?? '',
          apt: e.packages.apt.join('\n'),
          npm: e.packages.npm.join('\n'),
          pip: e.packages.pip.join('\n'),
          hosts: e.network.allowedHosts.join('\n'),
        }),
        submit: (e, v) => gql(UPDATE, { id: e.id, input: input(v) }),
      }}
      remove={{ label: 'Archive', show: (e) => !e.archivedAt, run: (e) => gql(ARCHIVE, { id: e.id }) }}
      hidden={{ test: (e) => !!e.archivedAt, label: 'Show archived environments' }}
    />
  );
}
