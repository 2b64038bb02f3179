// Environments: the create/patch bodies and the environment as returned (CONTRACT.md,
// "Environments and vaults"). One definition each for REST validation, OpenAPI, the GraphQL
// types and the domain.
import { z } from 'zod';
import { dateTime } from '../contract/zod-walk.js';
import {
  MAX_PACKAGE_SPEC_LENGTH,
  MAX_PACKAGES_PER_MANAGER,
  PACKAGE_SPEC_HELP,
  PACKAGE_SPEC_PATTERNS,
  packageName,
  type PackageManager,
} from './package-specs.js';

export const MAX_ALLOWED_HOSTS = 256;

const packageList = (manager: PackageManager) =>
  z
    .array(z.string().min(1).max(MAX_PACKAGE_SPEC_LENGTH).regex(PACKAGE_SPEC_PATTERNS[manager], `must be ${PACKAGE_SPEC_HELP[manager]}`))
    .max(MAX_PACKAGES_PER_MANAGER)
    .superRefine((specs, ctx) => {
      const seen = new Set<string>();
      for (const spec of specs) {
        const name = packageName(manager, spec).toLowerCase();
        if (seen.has(name)) ctx.addIssue({ code: 'custom', message: `${name} is listed twice` });
        seen.add(name);
      }
    })
    .describe(`At most ${MAX_PACKAGES_PER_MANAGER}; each ${PACKAGE_SPEC_HELP[manager]}`);

// A hostname (`api.github.com`), optionally `*.` for every subdomain, optionally `:port`.
const LABEL = '[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const HOST_PATTERN = new RegExp(`^(\\*\\.)?${LABEL}(\\.${LABEL})*(:([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?$`);
const allowedHost = z
  .string()
  .min(1)
  .max(260)
  .regex(HOST_PATTERN, 'must be a hostname or host:port (`*.example.com` for its subdomains)')
  .refine((h) => h.split(':')[0]!.length <= 253, 'hostname longer than 253 characters');

const packagesInput = z
  .strictObject({
    apt: packageList('apt').default([]),
    npm: packageList('npm').default([]),
    pip: packageList('pip').default([]),
  })
  .meta({ id: 'EnvironmentPackagesInput', description: 'Installed when a session starts; cached per environment version' });

const packagesPatch = z
  .strictObject({
    apt: packageList('apt').optional(),
    npm: packageList('npm').optional(),
    pip: packageList('pip').optional(),
  })
  .meta({ id: 'EnvironmentPackagesPatch', description: 'Each list given replaces that list; a change makes a new environment version (installed afresh)' });

const networkInput = z
  .strictObject({
    allowed_hosts: z
      .array(allowedHost)
      .max(MAX_ALLOWED_HOSTS)
      .default([])
      .describe(`At most ${MAX_ALLOWED_HOSTS}; empty: no outbound access except the model gateway`),
  })
  .meta({ id: 'EnvironmentNetworkInput' });

export const createEnvironmentBody = z
  .strictObject({
    name: z.string().min(1).max(120),
    description: z.string().max(2048).nullish(),
    packages: packagesInput.default({ apt: [], npm: [], pip: [] }),
    network: networkInput.default({ allowed_hosts: [] }),
  })
  .meta({ id: 'CreateEnvironmentInput' });
export type CreateEnvironmentBody = z.output<typeof createEnvironmentBody>;

export const patchEnvironmentBody = z
  .strictObject({
    name: z.string().min(1).max(120).optional(),
    description: z.string().max(2048).nullable().optional(),
    packages: packagesPatch.optional(),
    network: networkInput.optional().describe('Replaces the allow-list; live sessions apply it on their next request'),
  })
  .meta({ id: 'UpdateEnvironmentInput' });
export type PatchEnvironmentBody = z.output<typeof patchEnvironmentBody>;

// ---- answers ----

export const environmentPackages = z
  .strictObject({
    apt: z.array(z.string()),
    npm: z.array(z.string()),
    pip: z.array(z.string()),
  })
  .meta({ id: 'EnvironmentPackages' });
export type EnvironmentPackages = z.output<typeof environmentPackages>;

export const environmentNetwork = z
  .strictObject({
    allowed_hosts: z.array(z.string()).describe('Empty: no outbound access except the model gateway'),
  })
  .meta({ id: 'EnvironmentNetwork' });
export type EnvironmentNetwork = z.output<typeof environmentNetwork>;

export const environmentBody = z
  .strictObject({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    packages: environmentPackages,
    network: environmentNetwork,
    archived_at: dateTime(z.string()).nullable().describe('Archived environments refuse new sessions'),
    created_at: dateTime(z.string()),
    updated_at: dateTime(z.string()),
  })
  .meta({ id: 'Environment' });
export type EnvironmentView = z.output<typeof environmentBody>;

export const environmentList = z
  .strictObject({
    data: z.array(environmentBody).describe('Newest first'),
    next_page: z.string().nullable().describe('Pass back as ?page= for the next page; null on the last page'),
  })
  .meta({ id: 'EnvironmentList' });
