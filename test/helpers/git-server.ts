// A real git server for tests: git's own http-backend (CGI) behind node:http, serving bare
// repositories over "smart HTTP", optionally requiring a token (HTTP Basic, any user).
import http from 'node:http';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';

export interface GitServer {
  url: string;
  root: string;
  /** Every Authorization header the server saw. */
  authHeaders: string[];
  /** Creates a bare repo `<name>.git` from files (and optional symlinks), returns its URL and head sha. */
  createRepo(name: string, files: Record<string, string>, opts?: { symlinks?: Record<string, string>; branch?: string }): { url: string; sha: string };
  close(): Promise<void>;
}

export async function startGitServer(opts: { token?: string } = {}): Promise<GitServer> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'git-server-'));
  const authHeaders: string[] = [];
  const server = http.createServer((req, res) => {
    const auth = req.headers.authorization ?? '';
    authHeaders.push(auth);
    if (opts.token) {
      const decoded = auth.startsWith('Basic ') ? Buffer.from(auth.slice(6), 'base64').toString() : '';
      if (decoded.split(':').slice(1).join(':') !== opts.token) {
        res.writeHead(401, { 'www-authenticate': 'Basic realm="git"' }).end('unauthorized');
        return;
      }
    }
    const url = new URL(req.url ?? '/', 'http://x');
    const cgi = spawn('/usr/lib/git-core/git-http-backend', [], {
      env: {
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        PATH_INFO: url.pathname,
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: req.method ?? 'GET',
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        REMOTE_USER: 'test',
        REMOTE_ADDR: '127.0.0.1',
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HTTP_GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
      },
    });
    req.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let headersDone = false;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (headersDone) return void res.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end === -1) return;
      headersDone = true;
      let status = 200;
      for (const line of head.subarray(0, end).toString().split('\r\n')) {
        const [k, ...v] = line.split(':');
        if (k!.toLowerCase() === 'status') status = parseInt(v.join(':').trim(), 10);
        else res.setHeader(k!, v.join(':').trim());
      }
      res.writeHead(status);
      res.write(head.subarray(end + 4));
    });
    cgi.on('close', () => res.end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', args, {
      cwd,
      env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' },
    })
      .toString()
      .trim();
  return {
    url: base,
    root,
    authHeaders,
    createRepo(name, files, o = {}) {
      const work = fs.mkdtempSync(path.join(os.tmpdir(), 'git-work-'));
      git(work, 'init', '-q', '-b', o.branch ?? 'main');
      for (const [p, content] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(work, p)), { recursive: true });
        fs.writeFileSync(path.join(work, p), content);
      }
      for (const [p, target] of Object.entries(o.symlinks ?? {})) fs.symlinkSync(target, path.join(work, p));
      git(work, 'add', '-A');
      git(work, 'commit', '-q', '-m', 'init');
      const sha = git(work, 'rev-parse', 'HEAD');
      git(root, 'clone', '-q', '--bare', work, `${name}.git`);
      fs.rmSync(work, { recursive: true, force: true });
      return { url: `${base}/${name}`, sha };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}
