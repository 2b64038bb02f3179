// The frame of the server-rendered pages (sign-in, device approval, notices): one small style
// sheet, no script, no external resource. Also the headers every HTML answer carries.
import type { Response } from 'express';

export const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const STYLE = `
:root{color-scheme:light dark;--fg:#1b1f24;--muted:#57606a;--bg:#f6f8fa;--card:#fff;--line:#d0d7de;--accent:#0a58ca;--err:#a40e26}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#9ea7b3;--bg:#0d1117;--card:#161b22;--line:#30363d;--accent:#58a6ff;--err:#ff7b72}}
*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:26rem;margin:4rem auto;padding:1.5rem;background:var(--card);border:1px solid var(--line);border-radius:8px}
h1{font-size:1.4rem;margin:0 0 1rem}label{display:block;margin:.75rem 0 .25rem;font-weight:600}
input{width:100%;padding:.55rem;font:inherit;color:inherit;background:var(--bg);border:1px solid var(--line);border-radius:6px}
button{margin-top:1rem;padding:.55rem 1.1rem;font:inherit;font-weight:600;border-radius:6px;border:1px solid var(--accent);background:var(--accent);color:#fff;cursor:pointer}
button.secondary{background:transparent;color:var(--accent)}
.err{color:var(--err);font-weight:600}.muted{color:var(--muted);font-size:.9rem}a{color:var(--accent)}
code{font-size:.95em}@media (max-width:30rem){main{margin:0;border:0;border-radius:0;min-height:100vh}}`;

export function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1"><title>${esc(title)} · Agent Service</title><link rel="icon" href="data:,">
<style>${STYLE}</style></head><body><main>${body}</main></body></html>`;
}

/** HTML answers: never cached (they show who is signed in), never framed (clickjacking). */
export function sendHtml(
  res: Response,
  html: string,
  status = 200,
  csp = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
): void {
  res
    .status(status)
    .set('cache-control', 'no-store')
    .set('x-frame-options', 'DENY')
    .set('referrer-policy', 'same-origin')
    .set('x-content-type-options', 'nosniff')
    .set('content-security-policy', csp)
    .type('html')
    .send(html);
}
