// Cross-site request forgery guard. The sign-in cookie is SameSite=Lax, which keeps it off
// requests from other sites, but not from other origins of the same site (another port on the
// same host). So every state-changing request a browser makes with the cookie — and every
// sign-in form post — must come from this origin: the browser's Sec-Fetch-Site says so, or
// else its Origin header must equal ours. Requests with a bearer token are not forgeable (a page
// cannot attach the header cross-origin) and requests without Origin or Sec-Fetch-Site do not
// come from a browser page, so both pass.
import type { NextFunction, Request, Response } from 'express';
import { parse as parseCookie } from 'cookie';
import { SESSION_COOKIE } from '../auth/viewer.js';
import { sendError } from '../wire/error-envelope.js';
import { config } from '../config.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Origins this service answers as: the request's own host, and PUBLIC_URL when set. */
function ownOrigins(req: Request): string[] {
  const out = [`${req.protocol}://${req.get('host')}`];
  const publicUrl = config().publicUrl;
  if (publicUrl) {
    try {
      out.push(new URL(publicUrl).origin);
    } catch {
      /* an invalid PUBLIC_URL is reported where it is used */
    }
  }
  return out;
}

export function isCrossOrigin(req: Request): boolean {
  const site = req.get('sec-fetch-site');
  if (site) return site !== 'same-origin' && site !== 'none';
  const origin = req.get('origin');
  if (!origin) return false;
  return !ownOrigins(req).includes(origin);
}

function cookieAuthenticated(req: Request): boolean {
  if (req.get('authorization')) return false;
  return !!parseCookie(req.get('cookie') ?? '')[SESSION_COOKIE];
}

/** Refuses cross-origin state changes made with the cookie, and cross-origin sign-ins. */
export function originGuard(req: Request, res: Response, next: NextFunction): void {
  if (SAFE_METHODS.has(req.method)) return next();
  const signIn = req.path === '/auth/login';
  if ((signIn || cookieAuthenticated(req)) && isCrossOrigin(req)) {
    return sendError(res, 403, 'forbidden', "cross-origin request refused: a signed-in browser may change things only from this service's own pages");
  }
  next();
}
