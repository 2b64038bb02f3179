// Where an environment's packages live in its prepared directory, and the search paths a
// sandboxed command needs to find them there (seen read-only at ENVIRONMENT_MOUNT):
//   npm/node_modules      npm install --prefix npm       → NODE_PATH, node_modules/.bin on PATH
//   apt/                  each .deb unpacked (dpkg -x)   → usr/bin, usr/games, … on PATH; libs
//   pip/                  pip install --target pip       → PYTHONPATH, pip/bin on PATH
import type { EnvironmentMount } from '../sandbox/driver.js';

export const ENVIRONMENT_MOUNT = '/opt/environment';

const MULTIARCH: Record<string, string> = { x64: 'x86_64-linux-gnu', arm64: 'aarch64-linux-gnu' };

export function searchPaths(root: string): Record<string, string> {
  const triplet = MULTIARCH[process.arch] ?? `${process.arch}-linux-gnu`;
  const apt = `${root}/apt`;
  return {
    PATH: [
      `${root}/npm/node_modules/.bin`,
      `${root}/pip/bin`,
      `${apt}/usr/local/bin`,
      `${apt}/usr/bin`,
      `${apt}/bin`,
      `${apt}/usr/sbin`,
      `${apt}/usr/games`,
    ].join(':'),
    NODE_PATH: `${root}/npm/node_modules`,
    PYTHONPATH: [`${root}/pip`, `${apt}/usr/lib/python3/dist-packages`].join(':'),
    LD_LIBRARY_PATH: [`${apt}/usr/lib/${triplet}`, `${apt}/lib/${triplet}`, `${apt}/usr/lib`, `${apt}/lib`].join(':'),
    PERL5LIB: `${apt}/usr/share/perl5`,
  };
}

export function environmentMount(hostDir: string): EnvironmentMount {
  return { hostDir, inside: ENVIRONMENT_MOUNT, prepend: searchPaths(ENVIRONMENT_MOUNT) };
}
