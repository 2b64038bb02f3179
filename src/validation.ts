// Input validation with zod: one helper turns a failed parse into 400 invalid_request with a
// message that names the offending field.
import type { z } from 'zod';
import { AppError, type ErrorCode } from './errors.js';

export function describeIssue(issue: z.core.$ZodIssue): string {
  const where = issue.path.length ? issue.path.map(String).join('.') : 'body';
  return `${where}: ${issue.message}`;
}

/** The first issues of a failed parse of one part of a request (`body`, `query`), each named once: "body: …", "body.model: …". */
export function describeIssues(issues: readonly z.core.$ZodIssue[], part: string): string {
  return issues
    .slice(0, 3)
    .map((issue) => `${[part, ...issue.path.map(String)].join('.')}: ${issue.message}`)
    .join('; ');
}

export function parseInput<S extends z.ZodType>(schema: S, value: unknown, code: ErrorCode = 'invalid_request'): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new AppError(code, result.error.issues.slice(0, 3).map(describeIssue).join('; '));
  }
  return result.data;
}
