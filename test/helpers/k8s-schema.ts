// Offline validation of Kubernetes objects against the API's schema as @kubernetes/client-node
// ships it: its models are generated from the Kubernetes OpenAPI document (v1.34), each with an
// attribute map (field names and types) and typings that mark required fields. Unknown fields,
// wrong types and missing required fields are reported with their path, as the API server's
// strict field validation would.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import * as k8s from '@kubernetes/client-node';

interface Attr {
  name: string;
  baseName: string;
  type: string;
}
type Model = { getAttributeTypeMap?: () => Attr[] };
const models = k8s as unknown as Record<string, Model | undefined>;
const MODEL_DIR = path.join(path.dirname(createRequire(import.meta.url).resolve('@kubernetes/client-node')), 'gen', 'models');

/** apiVersion/kind → model name: `apps/v1` `Deployment` → V1Deployment, `policy/v1` `PodDisruptionBudget` → V1PodDisruptionBudget. */
function modelOf(apiVersion: string, kind: string): string {
  const version = apiVersion.split('/').pop()!;
  return `${version.charAt(0).toUpperCase()}${version.slice(1)}${kind}`;
}

const requiredCache = new Map<string, Set<string>>();
/** Fields the typings declare without `?`: required by the schema. */
function requiredOf(type: string): Set<string> {
  let req = requiredCache.get(type);
  if (!req) {
    req = new Set<string>();
    const file = path.join(MODEL_DIR, `${type}.d.ts`);
    if (fs.existsSync(file)) for (const m of fs.readFileSync(file, 'utf8').matchAll(/^\s+'([^']+)': /gm)) req.add(m[1]!);
    requiredCache.set(type, req);
  }
  return req;
}

function check(value: unknown, type: string, at: string, errors: string[]): void {
  const kind = Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value;
  const want = (ok: boolean, what: string) => void (ok || errors.push(`${at}: expected ${what}, got ${kind}`));
  if (type === 'string' || type === 'Date') return want(kind === 'string', 'a string');
  if (type === 'number') return want(kind === 'number', 'a number');
  if (type === 'boolean') return want(kind === 'boolean', 'a boolean');
  if (type === 'any' || type === 'object') return;
  if (type === 'IntOrString') return want(kind === 'string' || kind === 'number', 'an integer or a string');
  const array = /^Array<(.+)>$/.exec(type);
  if (array) {
    if (kind !== 'array') return want(false, 'a list');
    (value as unknown[]).forEach((v, i) => check(v, array[1]!, `${at}[${i}]`, errors));
    return;
  }
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) {
    if (kind !== 'object') return want(false, 'a map');
    for (const [k, v] of Object.entries(value as object)) check(v, map[1]!, `${at}.${k}`, errors);
    return;
  }
  const model = models[type];
  if (!model?.getAttributeTypeMap) return void errors.push(`${at}: no schema for ${type}`);
  if (kind !== 'object') return want(false, `an object (${type})`);
  const attrs = new Map(model.getAttributeTypeMap().map((a) => [a.baseName, a]));
  for (const [k, v] of Object.entries(value as object)) {
    const attr = attrs.get(k);
    if (!attr) errors.push(`${at}: unknown field "${k}" in ${type}`);
    else if (v !== null && v !== undefined) check(v, attr.type, `${at}.${k}`, errors);
  }
  for (const k of requiredOf(type)) {
    const attr = [...attrs.values()].find((a) => a.name === k);
    if (attr && (value as Record<string, unknown>)[attr.baseName] === undefined) errors.push(`${at}: missing required field "${attr.baseName}" in ${type}`);
  }
}

/** Problems of one object (empty when it is valid). */
export function validateObject(obj: { apiVersion?: unknown; kind?: unknown }): string[] {
  if (typeof obj.apiVersion !== 'string' || typeof obj.kind !== 'string') return ['apiVersion and kind are required'];
  const type = modelOf(obj.apiVersion, obj.kind);
  if (!models[type]?.getAttributeTypeMap) return [`unknown kind ${obj.apiVersion} ${obj.kind}`];
  const errors: string[] = [];
  check(obj, type, `${obj.kind}`, errors);
  return errors;
}
