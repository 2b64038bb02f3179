// The small HTML page where a signed-in user approves a command-line login.
const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export interface DevicePageState {
  signedInAs: string | null;
  userCode: string;
  valid: boolean;
  scope: string | null;
  error: string | null;
  done: string | null;
}

export function devicePage(s: DevicePageState): string {
  const here = `/auth/device/verify?user_code=${encodeURIComponent(s.userCode)}`;
  let body: string;
  if (s.done) {
    body = `<p>${s.done === 'approve' ? 'Approved. You can return to your terminal.' : 'Denied.'}</p>`;
  } else if (!s.signedInAs) {
    body = `<form method="post" action="/auth/login">
      <p>Sign in to approve the command-line login.</p>
      ${s.error ? '<p class="err">Wrong email or password.</p>' : ''}
      <label>Email <input name="email" type="email" required></label>
      <label>Password <input name="password" type="password" required></label>
      <input type="hidden" name="next" value="${esc(here)}">
      <button>Sign in</button></form>`;
  } else if (!s.valid) {
    body = `<form method="get"><p>Signed in as ${esc(s.signedInAs)}.</p>
      ${s.userCode ? '<p class="err">That code is unknown or expired.</p>' : ''}
      <label>Code <input name="user_code" value="${esc(s.userCode)}" required></label><button>Continue</button></form>`;
  } else {
    body = `<form method="post" action="/auth/device/approve"><p>Signed in as ${esc(s.signedInAs)}.</p>
      <p>Approve a <b>${esc(s.scope ?? '')}</b> token for the command line showing code <b>${esc(s.userCode)}</b>?</p>
      <input type="hidden" name="user_code" value="${esc(s.userCode)}">
      <button name="action" value="approve">Approve</button> <button name="action" value="deny">Deny</button></form>`;
  }
  return `<!doctype html><html><head><meta charset="utf-8"><title>Agent Service — device login</title>
<style>body{font:16px system-ui;max-width:32em;margin:4em auto}label{display:block;margin:.5em 0}.err{color:#b00}</style>
</head><body><h1>Command-line login</h1>${body}</body></html>`;
}
