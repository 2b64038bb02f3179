// The page where a signed-in user approves a command-line login (signing in happens on the
// sign-in page, which sends the user back here).
import { esc, page } from './pages.js';

export interface DevicePageState {
  signedInAs: string;
  userCode: string;
  valid: boolean;
  scope: string | null;
  done: string | null;
}

export function devicePage(s: DevicePageState): string {
  let body: string;
  if (s.done) {
    body = `<p role="status">${s.done === 'approve' ? 'Approved. You can return to your terminal.' : 'Denied. The command line gets no token.'}</p>`;
  } else if (!s.valid) {
    body = `<form method="get"><p>Signed in as ${esc(s.signedInAs)}.</p>
      ${s.userCode ? '<p class="err" role="alert">That code is unknown or expired.</p>' : ''}
      <label for="user_code">Code shown in the terminal</label><input id="user_code" name="user_code" value="${esc(s.userCode)}" required>
      <button type="submit">Continue</button></form>`;
  } else {
    body = `<form method="post" action="/auth/device/approve"><p>Signed in as ${esc(s.signedInAs)}.</p>
      <p>Approve ${/^[aeiou]/i.test(s.scope ?? '') ? 'an' : 'a'} <b>${esc(s.scope ?? '')}</b> token for the command line showing code <b>${esc(s.userCode)}</b>?</p>
      <input type="hidden" name="user_code" value="${esc(s.userCode)}">
      <button name="action" value="approve">Approve</button> <button class="secondary" name="action" value="deny">Deny</button></form>`;
  }
  return page('Command-line login', `<h1>Command-line login</h1>${body}<p class="muted"><a href="/">Dashboard</a></p>`);
}
