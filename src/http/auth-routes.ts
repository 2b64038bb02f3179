// /auth: browser sign-in (cookie), sign-out, and the device flow used by `agent-service login`.
import express, { type Request, type Response, type Router } from 'express';
import { parse as parseCookie } from 'cookie';
import { z } from 'zod';
import { SESSION_COOKIE, resolveViewer } from '../auth/viewer.js';
import { signIn, signOut } from '../auth/web-sessions.js';
import { startDeviceFlow, pollDeviceCode, decideDeviceCode, findPending, DEVICE_CODE_TTL_S, POLL_INTERVAL_S } from '../auth/device.js';
import { AppError } from '../errors.js';
import { sendError } from './error-envelope.js';
import { config } from '../config.js';
import { parseInput } from '../validation.js';
import { devicePage } from './device-page.js';

const loginSchema = z.object({ email: z.string().min(1).max(320), password: z.string().min(1).max(1000), next: z.string().optional() });

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
  return next && next.startsWith('/') && !next.startsWith('//') ? next : null;
}

export function authRouter(): Router {
  const r = express.Router();
  r.use(express.urlencoded({ extended: false, limit: '16kb' }));

  r.post('/login', wrap(async (req, res) => {
    const input = parseInput(loginSchema, req.body ?? {});
    const session = await signIn(input.email, input.password);
    const next = safeNext(input.next);
    if (!session) {
      if (next) return void res.redirect(303, `${next}${next.includes('?') ? '&' : '?'}error=invalid_credentials`);
      return sendError(res, 401, 'invalid_credentials', 'wrong email or password');
    }
    res.cookie(SESSION_COOKIE, session.cookie, {
      httpOnly: true, sameSite: 'lax', secure: config().cookieSecure, path: '/', expires: session.expiresAt,
    });
    if (next) return void res.redirect(303, next);
    const viewer = await resolveViewer({ sessionCookie: session.cookie });
    res.json({ ok: true, user: { id: viewer!.user.id, email: viewer!.user.email, name: viewer!.user.name }, expiresAt: session.expiresAt.toISOString() });
  }));

  r.post('/logout', wrap(async (req, res) => {
    const cookie = parseCookie(req.get('cookie') ?? '')[SESSION_COOKIE];
    if (cookie) await signOut(cookie);
    res.clearCookie(SESSION_COOKIE, { path: '/' });
    res.json({ ok: true });
  }));

  r.post('/device', wrap(async (req, res) => {
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
  }));

  r.post('/device/token', wrap(async (req, res) => {
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
  }));

  r.get('/device/verify', wrap(async (req, res) => {
    const code = typeof req.query.user_code === 'string' ? req.query.user_code : '';
    const viewer = await cookieViewer(req);
    const pending = code ? await findPending(code) : null;
    res.type('html').send(devicePage({
      signedInAs: viewer?.user.email ?? null,
      userCode: code,
      valid: !!pending,
      scope: pending?.scope ?? null,
      error: typeof req.query.error === 'string' ? req.query.error : null,
      done: typeof req.query.done === 'string' ? req.query.done : null,
    }));
  }));

  r.post('/device/approve', wrap(async (req, res) => {
    const viewer = await cookieViewer(req);
    if (!viewer) return sendError(res, 401, 'invalid_token', 'sign in first');
    const { user_code, action } = parseInput(z.object({ user_code: z.string().min(1).max(20), action: z.enum(['approve', 'deny']).default('approve') }), req.body ?? {});
    await decideDeviceCode(user_code, viewer.user.id, action === 'approve');
    if (req.is('application/x-www-form-urlencoded')) return void res.redirect(303, `/auth/device/verify?done=${action}`);
    res.json({ ok: true, status: action === 'approve' ? 'approved' : 'denied' });
  }));

  return r;
}
