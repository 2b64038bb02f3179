// The browser sign-in page (GET /auth/login). The form posts to /auth/login, which redirects to
// `next` (a same-site path: the dashboard, GraphiQL, or a device approval) once signed in.
import { esc, page } from './pages.js';

export interface LoginPageState {
  next: string;
  /** The email of a refused attempt, filled in again so only the password is typed anew. */
  email: string;
  error: string | null;
  retryAfterS: number | null;
  signedOut: boolean;
  /** Shown when the sign-in is a step of a command-line (device) login. */
  forDevice: boolean;
}

const ERRORS: Record<string, string> = {
  invalid_credentials: 'Wrong email or password.',
  invalid_request: 'Enter an email and a password.',
};

export function loginPage(s: LoginPageState): string {
  let notice = '';
  if (s.error === 'rate_limited') {
    const wait = s.retryAfterS ? ` Try again in ${Math.ceil(s.retryAfterS / 60)} minute${s.retryAfterS > 60 ? 's' : ''}.` : '';
    notice = `<p class="err" role="alert">Too many failed sign-ins.${wait}</p>`;
  } else if (s.error) {
    notice = `<p class="err" role="alert">${esc(ERRORS[s.error] ?? 'Sign-in failed.')}</p>`;
  } else if (s.signedOut) {
    notice = '<p role="status">You are signed out.</p>';
  }
  const intro = s.forDevice
    ? '<p>Sign in to approve the command-line login.</p>'
    : '<p class="muted">The owner account is <code>ADMIN_EMAIL</code> (default admin@localhost) with <code>ADMIN_PASSWORD</code>, or the password printed at the first start.</p>';
  return page(
    'Sign in',
    `<h1>Sign in to Agent Service</h1>${intro}${notice}
<form method="post" action="/auth/login">
  <label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required${s.email ? ` value="${esc(s.email)}"` : ' autofocus'}>
  <label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required${s.email ? ' autofocus' : ''}>
  <input type="hidden" name="next" value="${esc(s.next)}">
  <button type="submit">Sign in</button>
</form>`,
  );
}
