// Files: the universe's uploads. Upload (REST POST /v1/files: a byte stream, which GraphQL does
// not carry; same origin and the same cookie) and delete (GraphQL deleteFile).
import { currentUniverse, doc, gql, GraphQLRequestError } from '../../shared/graphql.js';
import { bytes, when } from '../lib/format.js';
import { ResourcePage } from '../resource.js';

interface FileRow {
  id: string;
  filename: string;
  mimeType: string;
  sizeBytes: number;
  createdAt: string;
  expiresAt: string | null;
}
const LIST = doc`query Files { files(limit: 100) { data { id filename mimeType sizeBytes createdAt expiresAt } } }`;
const DELETE = doc`mutation DeleteFile($id: String!) { deleteFile(id: $id) { id } }`;

async function upload(file: File): Promise<void> {
  const body = new FormData();
  body.append('file', file, file.name);
  const slug = currentUniverse();
  const res = await fetch('/v1/files', { method: 'POST', credentials: 'same-origin', body, headers: slug ? { 'x-universe': slug } : {} });
  if (res.ok) return;
  const answer = (await res.json().catch(() => null)) as { error?: { code: string; message: string } } | null;
  throw new GraphQLRequestError(answer?.error?.message ?? `upload failed (${res.status})`, answer?.error?.code ?? 'error', res.status);
}

export function FilesPage() {
  return (
    <ResourcePage<FileRow>
      title="Files"
      noun="file"
      rowKey={(f) => f.id}
      rowName={(f) => f.filename}
      intro={<>Uploads of this universe (at most 32 MiB each), newest first; attach them to messages or sessions by id.</>}
      empty="No files uploaded."
      load={() => gql<{ files: { data: FileRow[] } }>(LIST).then((d) => d.files.data)}
      columns={[
        {
          label: 'File',
          cell: (f) => (
            <>
              {f.filename}
              <br />
              <small className="muted">
                <code>{f.id}</code>
              </small>
            </>
          ),
        },
        { label: 'Type', cell: (f) => f.mimeType },
        { label: 'Size', num: true, cell: (f) => bytes(f.sizeBytes) },
        { label: 'Uploaded', cell: (f) => when(f.createdAt) },
        { label: 'Expires', cell: (f) => (f.expiresAt ? when(f.expiresAt) : 'never') },
      ]}
      create={{
        submitLabel: 'Upload',
        fields: [{ name: 'file', label: 'File', kind: 'file', required: true }],
        submit: async (v) => {
          if (!(v.file instanceof File)) throw new Error('Choose a file first.');
          await upload(v.file);
        },
      }}
      remove={{ run: (f) => gql(DELETE, { id: f.id }) }}
    />
  );
}
