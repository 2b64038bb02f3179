// The egress CA: the certificate authority the proxy signs per-host certificates with when it
// terminates TLS to add a session's headers (mitm.ts). Sandboxes trust it (their CA bundle
// has it appended); nothing else does.
//
// EGRESS_CA_CERT / EGRESS_CA_KEY (PEM text or a file path) give it explicitly: every API
// process of one deployment must share it (a Kubernetes Secret). Without them a CA is made once
// into DATA_DIR/egress-ca/ and reused. Certificates are built with node-forge and signed with
// node's own crypto (fast); leaf certificates are cached per host.
import { environment } from '../config.js';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import forge from 'node-forge';
import { service } from '../services/registry.js';

export interface EgressCa {
  certPem: string;
  /** The system's CA bundle with the egress CA appended (what sandboxes use as their trust store). */
  bundlePem: string;
  /** A certificate and key for `host` (a name or an IP literal), signed by the CA. */
  leaf(host: string): { cert: string; key: string };
}

const SYSTEM_BUNDLES = ['/etc/ssl/certs/ca-certificates.crt', '/etc/pki/tls/certs/ca-bundle.crt', '/etc/ssl/cert.pem'];
const LEAF_CACHE = 500;

function pemOrFile(raw: string): string {
  return raw.includes('-----BEGIN') ? raw : fs.readFileSync(raw, 'utf8');
}

// In node-forge, untyped: the to-be-signed part of a certificate.
const tbsOf = (forge.pki as unknown as { getTBSCertificate(c: forge.pki.Certificate): forge.asn1.Asn1 }).getTBSCertificate;

function signWith(cert: forge.pki.Certificate, key: crypto.KeyObject): void {
  cert.siginfo.algorithmOid = forge.pki.oids.sha256WithRSAEncryption!;
  cert.signatureOid = forge.pki.oids.sha256WithRSAEncryption!;
  const tbs = forge.asn1.toDer(tbsOf(cert)).getBytes();
  cert.signature = crypto.sign('sha256', Buffer.from(tbs, 'binary'), key).toString('binary');
}

function serial(): string {
  return `01${crypto.randomBytes(15).toString('hex')}`; // positive, 16 bytes
}

function forgePublicKey(key: crypto.KeyObject): forge.pki.PublicKey {
  return forge.pki.publicKeyFromPem(crypto.createPublicKey(key).export({ type: 'spki', format: 'pem' }).toString());
}

// Off the event loop: key generation takes a few hundred milliseconds.
const generateRsa = () => promisify(crypto.generateKeyPair)('rsa', { modulusLength: 2048 });

async function makeCa(): Promise<{ certPem: string; keyPem: string }> {
  const { privateKey } = await generateRsa();
  const cert = forge.pki.createCertificate();
  cert.publicKey = forgePublicKey(privateKey);
  cert.serialNumber = serial();
  cert.validity.notBefore = new Date(Date.now() - 3600_000);
  cert.validity.notAfter = new Date(Date.now() + 10 * 365 * 86400_000);
  const name = [
    { name: 'commonName', value: 'agent-service egress CA' },
    { name: 'organizationName', value: 'agent-service' },
  ];
  cert.setSubject(name);
  cert.setIssuer(name);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  signWith(cert, privateKey);
  return { certPem: forge.pki.certificateToPem(cert), keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

async function loadOrCreate(dataDir: string, env: NodeJS.ProcessEnv): Promise<{ certPem: string; keyPem: string }> {
  if (env.EGRESS_CA_CERT && env.EGRESS_CA_KEY) return { certPem: pemOrFile(env.EGRESS_CA_CERT), keyPem: pemOrFile(env.EGRESS_CA_KEY) };
  const dir = path.join(dataDir, 'egress-ca');
  const certFile = path.join(dir, 'ca.crt');
  const keyFile = path.join(dir, 'ca.key');
  if (fs.existsSync(certFile) && fs.existsSync(keyFile)) return { certPem: fs.readFileSync(certFile, 'utf8'), keyPem: fs.readFileSync(keyFile, 'utf8') };
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const made = await makeCa();
  try {
    fs.writeFileSync(keyFile, made.keyPem, { mode: 0o600, flag: 'wx' });
    fs.writeFileSync(certFile, made.certPem, { mode: 0o644 });
    return made;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    // Another process made it first: use theirs.
    return { certPem: fs.readFileSync(certFile, 'utf8'), keyPem: fs.readFileSync(keyFile, 'utf8') };
  }
}

export async function openEgressCa(dataDir: string, env: NodeJS.ProcessEnv = environment()): Promise<EgressCa> {
  const { certPem, keyPem } = await loadOrCreate(dataDir, env);
  const caKey = crypto.createPrivateKey(keyPem);
  const caCert = forge.pki.certificateFromPem(certPem);
  const system = SYSTEM_BUNDLES.find((f) => fs.existsSync(f));
  const bundlePem = `${system ? fs.readFileSync(system, 'utf8').trimEnd() + '\n' : ''}${certPem}`;
  // One key for every leaf of this process: generating one per host would cost ~100 ms each.
  const { privateKey: leafKey } = await generateRsa();
  const leafKeyPem = leafKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const leafPublic = forgePublicKey(leafKey);
  const leaves = new Map<string, { cert: string; key: string }>();

  return {
    certPem,
    bundlePem,
    leaf(host) {
      const hit = leaves.get(host);
      if (hit) return hit;
      const cert = forge.pki.createCertificate();
      cert.publicKey = leafPublic;
      cert.serialNumber = serial();
      cert.validity.notBefore = new Date(Date.now() - 3600_000);
      cert.validity.notAfter = new Date(Date.now() + 30 * 86400_000);
      cert.setSubject([{ name: 'commonName', value: host.slice(0, 64) }]);
      cert.setIssuer(caCert.subject.attributes);
      const isIp = /^[\d.]+$/.test(host) || host.includes(':');
      cert.setExtensions([
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
        { name: 'extKeyUsage', serverAuth: true },
        { name: 'subjectAltName', altNames: [isIp ? { type: 7, ip: host } : { type: 2, value: host }] },
      ]);
      signWith(cert, caKey);
      const out = { cert: forge.pki.certificateToPem(cert), key: leafKeyPem };
      if (leaves.size >= LEAF_CACHE) leaves.delete(leaves.keys().next().value!);
      leaves.set(host, out);
      return out;
    },
  };
}

declare module '../services/registry.js' {
  interface Services {
    /** The egress CA of the process's egress service (opened when the service composes). */
    egressCa: EgressCa;
  }
}

export function egressCa(): EgressCa {
  return service('egressCa');
}
