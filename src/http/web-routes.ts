// The browser surface: the dashboard at `/`, GraphiQL at `GET /graphql` (for a browser asking
// for HTML), and their bundles under `/assets` (built into web/dist by scripts/build-web.mjs; no
// CDN, so both work offline).
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseCookie } from 'cookie';
import { resolveViewer, SESSION_COOKIE } from '../auth/viewer.js';
import { EFFORTS_BY_TYPE } from '../agents/rules.js';
import { CAPABILITY_IDS } from '../catalog/capability-ids.js';
import { esc, page, sendHtml } from './pages.js';

export const WEB_DIST = path.resolve(import.meta.dirname, '../../web/dist');

let built = false;
function assetsBuilt(): boolean {
  built ||= fs.existsSync(path.join(WEB_DIST, 'build.json'));
  return built;
}

function notBuilt(res: Response): void {
  sendHtml(
    res,
    page(
      'Not built',
      `<h1>The web assets are not built</h1>
<p>Run <code>npm run web:build</code> (it runs on <code>npm install</code>) and reload.</p>`,
    ),
    503,
  );
}

async function signedInEmail(req: Request): Promise<string | null> {
  const cookie = parseCookie(req.get('cookie') ?? '')[SESSION_COOKIE];
  if (!cookie) return null;
  try {
    return (await resolveViewer({ sessionCookie: cookie }))?.user.email ?? null;
  } catch {
    return null; // expired or signed out elsewhere
  }
}

const DASHBOARD_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'";
// Monaco builds styles at run time and starts its workers from our own files.
const GRAPHIQL_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; font-src 'self' data:; img-src 'self' data:; worker-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'";

function dashboardHtml(): string {
  // Facts the server knows that GraphQL does not list: the capability ids an agent may opt into
  // and the reasoningEffort values of each engine.
  const boot = JSON.stringify({ capabilities: CAPABILITY_IDS, efforts: EFFORTS_BY_TYPE }).replace(/</g, '\\u003c');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1"><title>Agent Service</title><link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/app/main.css"><script type="module" src="/assets/app/main.js"></script></head>
<body><div id="app"><p class="boot">Loading the dashboard…</p></div>
<script type="application/json" id="boot">${boot}</script></body></html>`;
}

function graphiqlHtml(email: string | null): string {
  const who = email
    ? `Signed in as ${esc(email)} · <a href="/">Dashboard</a>`
    : 'Not signed in: <a href="/auth/login?next=%2Fgraphql">sign in</a>, or send an <code>Authorization: Bearer ast_…</code> header (Headers tab)';
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1"><title>GraphiQL · Agent Service</title><link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/graphiql/main.css"><script type="module" src="/assets/graphiql/main.js"></script>
<style>html,body{height:100%;margin:0}body{display:flex;flex-direction:column;font:14px system-ui,sans-serif}
header{display:flex;gap:1rem;align-items:baseline;padding:.35rem .75rem;border-bottom:1px solid #8884}header a{color:inherit}
header h1{font-size:1rem;margin:0}#graphiql{flex:1;min-height:0}
/* contrast (WCAG AA) where GraphiQL's and Monaco's defaults are too faint */
.graphiql-container .graphiql-logo .graphiql-logo-link{color:hsl(var(--color-neutral))}
.monaco-editor .line-numbers.dimmed-line-number{color:var(--vscode-editorLineNumber-foreground)!important}
@media (prefers-color-scheme:light){body:not(.graphiql-dark) .graphiql-container{--color-info:208,100%,34%;--color-warning:30,100%,28%}}
body.graphiql-light .graphiql-container{--color-info:208,100%,34%;--color-warning:30,100%,28%}
.graphiql-doc-explorer-type-name,.graphiql-doc-explorer-field-name{text-decoration:underline!important}</style></head>
<body><header><h1>GraphiQL</h1><span>${who}</span></header><main id="graphiql"><p>Loading GraphiQL…</p></main></body></html>`;
}

/** GraphiQL is shown when Yoga would show it: a GET whose Accept asks for HTML. */
function wantsGraphiQL(req: Request): boolean {
  return req.method === 'GET' && (req.get('accept') ?? '').includes('text/html');
}

export function webRouter(): Router {
  const r = express.Router();

  r.use('/assets', express.static(WEB_DIST, { index: false, fallthrough: true, etag: true, maxAge: 0 }));

  r.get('/', (req, res) => {
    if (!assetsBuilt()) return notBuilt(res);
    // No database call on the way to the first paint: without a cookie, sign in; with an expired
    // one, the dashboard's first GraphQL answer (invalid_token) sends the browser to sign in.
    if (!parseCookie(req.get('cookie') ?? '')[SESSION_COOKIE]) return void res.redirect(303, '/auth/login?next=%2F');
    sendHtml(res, dashboardHtml(), 200, DASHBOARD_CSP);
  });

  r.get('/graphql', async (req: Request, res: Response, next: NextFunction) => {
    if (!wantsGraphiQL(req)) return next();
    if (!assetsBuilt()) return notBuilt(res);
    sendHtml(res, graphiqlHtml(await signedInEmail(req)), 200, GRAPHIQL_CSP);
  });

  return r;
}
