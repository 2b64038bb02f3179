// Package specs an environment may name, per manager: a name with an optional version, in the
// subset of each ecosystem's syntax that cannot be read as an option, a path or a URL (every
// spec starts with a letter or digit, or `@scope/` for npm). Installers pass them as separate
// arguments, never through a shell.
//
//   apt  `name` or `name=version`                  (Debian policy names; version with epoch/revision)
//   npm  `name`, `@scope/name`, optional `@version` (a version, range or dist-tag; no URLs or paths)
//   pip  `name` or `name==version`                 (PEP 508 names; PEP 440 version characters)

export type PackageManager = 'apt' | 'npm' | 'pip';
export const PACKAGE_MANAGERS: readonly PackageManager[] = ['apt', 'npm', 'pip'];

export const MAX_PACKAGES_PER_MANAGER = 100;
export const MAX_PACKAGE_SPEC_LENGTH = 214;

export const PACKAGE_SPEC_PATTERNS: Record<PackageManager, RegExp> = {
  apt: /^[a-z0-9][a-z0-9+.-]+(=[0-9][A-Za-z0-9.+~:-]{0,127})?$/,
  npm: /^(@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*(@[A-Za-z0-9.^~*+<>=|_ -]{1,64})?$/,
  pip: /^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?(==[A-Za-z0-9.*+!_-]{1,64})?$/,
};

export const PACKAGE_SPEC_HELP: Record<PackageManager, string> = {
  apt: 'a Debian package name, optionally name=version',
  npm: 'an npm package name (or @scope/name), optionally @version',
  pip: 'a Python package name, optionally name==version',
};

/** The package name of a spec (without its version): `jq=1.6` → `jq`, `@a/b@1` → `@a/b`. */
export function packageName(manager: PackageManager, spec: string): string {
  if (manager === 'apt') return spec.split('=')[0]!;
  if (manager === 'pip') return spec.split('==')[0]!;
  const at = spec.indexOf('@', 1);
  return at < 0 ? spec : spec.slice(0, at);
}
