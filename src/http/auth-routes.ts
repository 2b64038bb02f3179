// /auth: browser sign-in (the page, and the cookie it sets; rate limited), sign-out, the
// device flow used by `agent-service login` (its approval page signs in through the same page),
// and token revocation by its holder (`agent-service logout`).
import express, { type Request, type Response, type Router } from 'express';
import { parse as parseCookie } from 'cookie';
import { z } from 'zod';
import { SESSION_COOKIE, clearViewerCache, resolveViewer } from '../auth/viewer.js';
import { signIn, signOut } from '../auth/web-sessions.js';
import { revokeTokenByValue } from '../auth/tokens.js';
import { startDeviceFlow, pollDeviceCode, decideDeviceCode, findPending, DEVICE_CODE_TTL_S, POLL_INTERVAL_S } from '../auth/device.js';
import { AppError } from '../errors.js';
import { sendError } from '../wire/error-envelope.js';
import { config } from '../config.js';
import { parseInput } from '../validation.js';
import { devicePage } from './device-page.js';
import { loginPage } from './login-page.js';
import { sendHtml } from './pages.js';
import { loginBlockedFor, recordLoginFailure, recordLoginSuccess } from '../ratelimit/login-limiter.js';

const loginSchema = z.object({ email: z.string().min(1).max(320), password: z.string().min(1).max(1000), next: z.string().max(2000).optional() });

function origin(req: Request): string {
  return `${req.protocol}://${req.get('host')}`;
}

function wrap(fn: (req: Request, res: Response) => Promise<void>) {
  return (req: Request, res: Response) => {
    fn(req, res).catch((err) => {
      if (err instanceof AppError) return sendError(res, err.status, err.code, err.message);
      throw err;
    });
  };
}

async function cookieViewer(req: Request) {
  const cookie = parseCookie(req.get('cookie') ?? '')[SESSION_COOKIE];
  if (!cookie) return null;
  try {
    return await resolveViewer({ sessionCookie: cookie });
  } catch {
    return null;
  }
}

/** Only same-site relative redirects after a form sign-in. */
function safeNext(next: string | undefined): string | null {
  return next && /^\/(?![/\\])[^\\\s]*$/.test(next) ? next : null;
}

export function authRouter(): Router {
  const r = express.Router();
  r.use(express.urlencoded({ extended: false, limit: '16kb' }));

  r.get(
    '/login',
    wrap(async (req, res) => {
      const next = safeNext(typeof req.query.next === 'string' ? req.query.next : undefined) ?? '/';
      if (await cookieViewer(req)) return void res.redirect(303, next);
      const retry = Number(req.query.retry_after);
      sendHtml(
        res,
        loginPage({
          next,
          email: typeof req.query.email === 'string' ? req.query.email.slice(0, 320) : '',
          error: typeof req.query.error === 'string' ? req.query.error : null,
          retryAfterS: Number.isFinite(retry) && retry > 0 ? retry : null,
          signedOut: req.query.signed_out === '1',
          forDevice: next.startsWith('/auth/device/'),
        }),
      );
    }),
  );

  r.post(
    '/login',
    wrap(async (req, res) => {
      // A form post (the sign-in page) is answered with redirects; a JSON call with JSON.
      const fromForm = req.is('application/x-www-form-urlencoded') === 'application/x-www-form-urlencoded';
      const next = safeNext(typeof req.body?.next === 'string' ? req.body.next : undefined) ?? (fromForm ? '/' : null);
      // The email goes back to the form (a refused sign-in keeps it; only the password is retyped).
      const email = typeof req.body?.email === 'string' ? req.body.email.slice(0, 320) : '';
      const backToForm = (error: string, retryAfter?: number) =>
        res.redirect(
          303,
          `/auth/login?${new URLSearchParams({ next: next ?? '/', error, ...(email ? { email } : {}), ...(retryAfter ? { retry_after: String(retryAfter) } : {}) })}`,
        );
      const parsed = loginSchema.safeParse(req.body ?? {});
      if (!parsed.success && next) return void backToForm('invalid_request');
      const input = parseInput(loginSchema, req.body ?? {});
      const address = req.ip ?? 'unknown';
      const refuse = (waitS: number) => {
        if (next) return void backToForm('rate_limited', waitS);
        res.set('Retry-After', String(waitS));
        sendError(res, 429, 'rate_limited', `too many failed sign-ins for this account from this address; retry in ${waitS} s`);
      };
      const blocked = await loginBlockedFor(input.email, address);
      if (blocked) return refuse(blocked);
      const session = await signIn(input.email, input.password);
      if (!session) {
        const wait = await recordLoginFailure(input.email, address);
        if (wait) return refuse(wait);
        if (next) return void backToForm('invalid_credentials');
        return sendError(res, 401, 'invalid_credentials', 'wrong email or password');
      }
      await recordLoginSuccess(input.email, address);
      res.cookie(SESSION_COOKIE, session.cookie, {
        httpOnly: true,
        sameSite: 'lax',
        secure: config().cookieSecure,
        path: '/',
        expires: session.expiresAt,
      });
      if (next) return void res.redirect(303, next);
      const viewer = await resolveViewer({ sessionCookie: session.cookie });
      res.json({ ok: true, user: { id: viewer!.user.id, email: viewer!.user.email, name: viewer!.user.name }, expiresAt: session.expiresAt.toISOString() });
    }),
  );

  r.post(
    '/logout',
    wrap(async (req, res) => {
      const cookie = parseCookie(req.get('cookie') ?? '')[SESSION_COOKIE];
      if (cookie) await signOut(cookie);
      res.clearCookie(SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'lax', secure: config().cookieSecure });
      if (req.is('application/x-www-form-urlencoded')) return void res.redirect(303, '/auth/login?signed_out=1');
      res.json({ ok: true });
    }),
  );

  // RFC 7009 shape: whoever holds a token may revoke it (the CLI's logout revokes the token its
  // login minted; minting and revoking others stays with a browser session). An unknown or
  // already revoked token is not an error (nothing to tell an attacker), only `revoked: false`.
  r.post(
    '/revoke',
    wrap(async (req, res) => {
      const { token } = parseInput(z.object({ token: z.string().min(1).max(200) }), req.body ?? {});
      const revoked = await revokeTokenByValue(token);
      if (revoked) clearViewerCache();
      res.json({ ok: true, revoked });
    }),
  );

  r.post(
    '/device',
    wrap(async (req, res) => {
      const { deviceCode, userCode } = await startDeviceFlow(req.body);
      const verification = `${origin(req)}/auth/device/verify`;
      res.json({
        device_code: deviceCode,
        user_code: userCode,
        verification_uri: verification,
        verification_uri_complete: `${verification}?user_code=${encodeURIComponent(userCode)}`,
        expires_in: DEVICE_CODE_TTL_S,
        interval: POLL_INTERVAL_S,
      });
    }),
  );

  r.post(
    '/device/token',
    wrap(async (req, res) => {
      const { device_code } = parseInput(z.object({ device_code: z.string().min(1).max(200) }), req.body ?? {});
      const result = await pollDeviceCode(device_code);
      if (result.kind === 'token') return void res.json({ token: result.token, scope: result.scope, universe: result.universe });
      const messages = {
        authorization_pending: 'waiting for the user to approve the code in the browser',
        access_denied: 'the user denied the request',
        expired_token: 'the code expired; start again',
        invalid_grant: 'unknown or already used device code',
      } as const;
      sendError(res, 400, result.code, messages[result.code]);
    }),
  );

  r.get(
    '/device/verify',
    wrap(async (req, res) => {
      const code = typeof req.query.user_code === 'string' ? req.query.user_code : '';
      const viewer = await cookieViewer(req);
      // Signing in is the sign-in page's job; it comes back here afterwards.
      if (!viewer) return void res.redirect(303, `/auth/login?${new URLSearchParams({ next: `/auth/device/verify?user_code=${encodeURIComponent(code)}` })}`);
      const pending = code ? await findPending(code) : null;
      sendHtml(
        res,
        devicePage({
          signedInAs: viewer.user.email,
          userCode: code,
          valid: !!pending,
          scope: pending?.scope ?? null,
          done: typeof req.query.done === 'string' ? req.query.done : null,
        }),
      );
    }),
  );

  r.post(
    '/device/approve',
    wrap(async (req, res) => {
      const viewer = await cookieViewer(req);
      if (!viewer) return sendError(res, 401, 'invalid_token', 'sign in first');
      const { user_code, action } = parseInput(
        z.object({ user_code: z.string().min(1).max(20), action: z.enum(['approve', 'deny']).default('approve') }),
        req.body ?? {},
      );
      await decideDeviceCode(user_code, viewer.user.id, action === 'approve');
      if (req.is('application/x-www-form-urlencoded')) return void res.redirect(303, `/auth/device/verify?done=${action}`);
      res.json({ ok: true, status: action === 'approve' ? 'approved' : 'denied' });
    }),
  );

  return r;
}
