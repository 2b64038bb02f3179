// Vaults: named sets of write-only credentials (an HTTP header the egress proxy adds for a host);
// create and delete a vault, put and delete its credentials. Values are never shown or returned.
import { doc, gql } from '../../shared/graphql.js';
import { when } from '../lib/format.js';
import { ConfirmButton, ErrorNote } from '../ui.js';
import { useAction } from '../lib/use-async.js';
import { FormCard, ResourcePage, optional, text } from '../resource.js';
import { Table } from '../table.js';

interface Credential {
  key: string;
  host: string;
  header: string;
  createdAt: string;
}
interface Vault {
  id: string;
  name: string;
  createdAt: string;
  credentials: Credential[];
}
const FIELDS = 'id name createdAt credentials { key host header createdAt }';
const LIST = doc`query Vaults { vaults(first: 100) { edges { node { ${FIELDS} } } } }`;
const CREATE = doc`mutation CreateVault($input: CreateVaultInput!) { createVault(input: $input) { id } }`;
const DELETE = doc`mutation DeleteVault($id: String!) { deleteVault(id: $id) }`;
const PUT = doc`mutation PutCredential($vaultId: String!, $key: String!, $input: PutVaultCredentialInput!) { putVaultCredential(vaultId: $vaultId, key: $key, input: $input) { id } }`;
const DELETE_CREDENTIAL = doc`mutation DeleteCredential($vaultId: String!, $key: String!) { deleteVaultCredential(vaultId: $vaultId, key: $key) { id } }`;

function Credentials({ vault, reload }: { vault: Vault; reload: () => void }) {
  const remove = useAction(async (key: string) => {
    await gql(DELETE_CREDENTIAL, { vaultId: vault.id, key });
    reload();
  });
  return (
    <>
      {vault.credentials.length ? (
        <Table
          rows={vault.credentials}
          rowKey={(c) => c.key}
          caption={`Credentials of ${vault.name}`}
          columns={[
            { label: 'Key', cell: (c) => <code>{c.key}</code> },
            { label: 'Host', cell: (c) => <code>{c.host}</code> },
            { label: 'Header', cell: (c) => <code>{c.header}</code> },
            { label: 'Set', cell: (c) => when(c.createdAt) },
            {
              label: 'Actions',
              hideLabel: true,
              cell: (c) => <ConfirmButton label="Delete" confirmLabel={`Delete ${c.key}`} busy={remove.busy} onConfirm={() => void remove.run(c.key)} />,
            },
          ]}
        />
      ) : (
        <p className="muted">No credentials yet.</p>
      )}
      <ErrorNote error={remove.error} prefix="Not deleted" />
      <FormCard
        key={vault.credentials.length}
        title="Set a credential"
        submitLabel="Save credential"
        fields={[
          { name: 'key', label: 'Key', required: true, placeholder: 'e.g. GITHUB', hint: 'A new key adds a credential; an existing key replaces it.' },
          { name: 'host', label: 'Host', required: true, placeholder: 'api.example.com' },
          { name: 'header', label: 'Header', placeholder: 'Authorization' },
          { name: 'prefix', label: 'Value prefix', placeholder: 'Bearer', hint: 'Empty: “Bearer ” (a space follows it).' },
          {
            name: 'value',
            label: 'Value',
            kind: 'password',
            required: true,
            hint: 'Write-only: stored encrypted, never shown again, never placed in a sandbox.',
          },
        ]}
        onSubmit={async (v) => {
          // The prefix untrimmed: "Bearer " keeps its space.
          await gql(PUT, {
            vaultId: vault.id,
            key: text(v.key),
            input: {
              host: text(v.host),
              header: optional(v.header),
              prefix: typeof v.prefix === 'string' && v.prefix ? v.prefix : undefined,
              value: typeof v.value === 'string' ? v.value : '',
            },
          });
          reload();
        }}
      />
    </>
  );
}

export function VaultsPage() {
  return (
    <ResourcePage<Vault>
      title="Vaults"
      noun="vault"
      rowKey={(v) => v.id}
      rowName={(v) => v.name}
      intro={
        <>Credentials sessions use without seeing them: the egress proxy adds each as a header on requests to its host. Name vaults when starting a session.</>
      }
      empty="No vaults yet."
      load={() => gql<{ vaults: { edges: { node: Vault }[] } }>(LIST).then((d) => d.vaults.edges.map((e) => e.node))}
      columns={[
        {
          label: 'Vault',
          cell: (v) => (
            <>
              {v.name}
              <br />
              <small className="muted">
                <code>{v.id}</code>
              </small>
            </>
          ),
        },
        { label: 'Credentials', cell: (v) => v.credentials.map((c) => `${c.key} → ${c.host}`).join(', ') || 'none' },
        { label: 'Created', cell: (v) => when(v.createdAt) },
      ]}
      create={{
        fields: [{ name: 'name', label: 'Name', required: true, maxLength: 120 }],
        submit: async (v) => void (await gql(CREATE, { input: { name: text(v.name) } })),
      }}
      detail={{ label: 'Credentials', render: (v, reload) => <Credentials vault={v} reload={reload} /> }}
      remove={{ run: (v) => gql(DELETE, { id: v.id }) }}
    />
  );
}
