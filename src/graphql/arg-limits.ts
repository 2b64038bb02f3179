// Plain string arguments (filters, cursors) checked against the lengths their REST query
// parameters allow: the REST route validates its query before it runs the same GraphQL field,
// a GraphQL caller reaches the field directly (an outside fuzz found 300-character filters
// answered 200 with nothing on GraphQL and 400 on REST).
import { AppError } from '../errors.js';

/** `value` when at most `max` characters; 400 invalid_request naming the argument otherwise. */
export function withinLength<T extends string | null | undefined>(name: string, value: T, max: number): T {
  if (typeof value === 'string' && value.length > max) throw new AppError('invalid_request', `${name}: at most ${max} characters`);
  return value;
}
